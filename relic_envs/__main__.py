import sys

from relic_envs.cli import main

sys.exit(main())
