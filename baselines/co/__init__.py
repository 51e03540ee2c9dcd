"""Classical comparators and references of the constructive routing benchmarks (HMTSP, FSTSP).

- :mod:`baselines.co.routing_tours`: nearest neighbour and 2-opt on one tour;
- :mod:`baselines.co.routing_hmtsp`: nearest-neighbour and cheapest-insertion assignment
  over the three vehicles, 2-opt and inter-route relocate, replay through the episode;
- :mod:`baselines.co.routing_fstsp`: the truck-only tour and its optimal drone split
  (dynamic programming over sorties), replay, exact optima of tiny instances;
- :mod:`baselines.co.routing`: OR-Tools routing-solver references, their caches and the
  results table (``python -m baselines.co.routing --table``).
"""
