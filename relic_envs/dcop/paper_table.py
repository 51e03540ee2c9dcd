"""The paper's Table 2 (tab:distributed-backbone), copied for side-by-side reports.

Mean and standard deviation of the raw cost on each DCOP test split, as printed in
``relic.tex``; nothing here is measured by this package.
"""

PAPER_TABLE2: dict[str, dict[str, tuple[float, float]]] = {
    "dgc": {
        "DSA-B": (3336.46, 150.65), "LSGA": (2006.35, 42.64),
        "EoH": (926.29, 6.53), "ReEvo": (907.47, 16.03), "MCTS-AHD": (912.40, 39.18),
        "HiFo": (941.37, 16.20), "MOTIF": (901.05, 20.53),
        "RELIC (GPT-4o-mini)": (859.70, 68.16), "RELIC (DeepSeek-V4-Flash)": (894.62, 38.20),
        "RELIC (Qwen-3.6-Flash)": (849.28, 0.00),
    },
    "dimes": {
        "DSA-B": (9453.24, 35.79), "LSGA": (7398.02, 8.20),
        "EoH": (1921.26, 20.68), "ReEvo": (1916.31, 0.00), "MCTS-AHD": (1951.56, 23.44),
        "HiFo": (1922.86, 17.71), "MOTIF": (1902.98, 5.98),
        "RELIC (GPT-4o-mini)": (1901.68, 15.30), "RELIC (DeepSeek-V4-Flash)": (1907.14, 34.91),
        "RELIC (Qwen-3.6-Flash)": (1900.08, 16.60),
    },
    "sensor_dcsp": {
        "DSA-B": (422.48, 12.79), "LSGA": (59.33, 15.13),
        "EoH": (167.23, 35.02), "ReEvo": (141.42, 8.00), "MCTS-AHD": (138.85, 19.51),
        "HiFo": (127.99, 20.70), "MOTIF": (73.26, 42.24),
        "RELIC (GPT-4o-mini)": (41.40, 15.08), "RELIC (DeepSeek-V4-Flash)": (51.45, 38.60),
        "RELIC (Qwen-3.6-Flash)": (39.63, 10.13),
    },
    "shds": {
        "DSA-B": (4452.50, 31.35), "LSGA": (4701.27, 132.56),
        "EoH": (3291.39, 463.66), "ReEvo": (3559.08, 0.00), "MCTS-AHD": (3374.23, 320.18),
        "HiFo": (3454.96, 180.35), "MOTIF": (3266.25, 684.94),
        "RELIC (GPT-4o-mini)": (2795.42, 223.44), "RELIC (DeepSeek-V4-Flash)": (2872.18, 398.53),
        "RELIC (Qwen-3.6-Flash)": (2800.30, 400.10),
    },
}
