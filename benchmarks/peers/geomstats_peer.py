"""Times geomstats on the inputs benchmarks/peers.py wrote; runs inside geomstats' own venv.

    python geomstats_peer.py WORKDIR ROUNDS

Reads WORKDIR/inputs.npz, writes the values to WORKDIR/geomstats_out.npz and prints JSON:
{"version": ..., "times": {case: seconds per call}, "missing": {case: reason}}. Only the
geomstats call is timed; geomstats' own point representation is used (the categorical
simplex in its three ambient coordinates), the caller converts for accuracy.
"""

import functools
import json
import sys
import time
import timeit
import warnings
from importlib.metadata import version

import numpy as np

warnings.filterwarnings("ignore")  # geomstats warns on import; keep stdout JSON only


def best(function, rounds, target=0.05):
    """CPU seconds per call, best of rounds; each round long enough for process_time."""
    started = time.process_time()
    function()
    once = max(time.process_time() - started, 1e-7)
    number = max(1, int(target / once))
    timer = timeit.Timer(function, timer=time.process_time)
    return min(timer.repeat(repeat=rounds, number=number)) / number


def cases(inputs):
    """case name -> (function of no argument); the names are those of benchmarks/peers.py."""
    from geomstats.information_geometry.categorical import CategoricalDistributions
    from geomstats.information_geometry.dirichlet import DirichletDistributions
    from geomstats.information_geometry.normal import NormalDistributions

    categorical = CategoricalDistributions(dim=2).metric
    dirichlet = DirichletDistributions(dim=3).metric
    normal = NormalDistributions(sample_dim=1).metric
    table = {}
    for name in inputs:
        family, quantity, _ = name.split(":")
        metric = {"categorical": categorical, "dirichlet": dirichlet, "normal": normal}[family]
        method = metric.metric_matrix if quantity == "metric" else metric.dist
        table[name] = functools.partial(method, *inputs[name])
    return table


def main():
    folder, rounds = sys.argv[1], int(sys.argv[2])
    with np.load(f"{folder}/inputs.npz") as data:
        inputs = {}
        for key in data.files:
            name, _ = key.rsplit("|", 1)
            inputs.setdefault(name, []).append(data[key])
    times, values, missing = {}, {}, {}
    for name, function in cases(inputs).items():
        try:
            values[name] = np.asarray(function(), dtype=float)
        except Exception as error:  # noqa: BLE001 - reported, never hidden
            missing[name] = f"{type(error).__name__}: {error}"[:200]
            continue
        # The numeric Dirichlet geodesic takes a fraction of a second: fewer rounds.
        slow = name.startswith("dirichlet:dist")
        if not name.endswith(":check"):
            times[name] = best(function, 1 if slow else rounds, 0.0 if slow else 0.05)
    np.savez(f"{folder}/geomstats_out.npz", **values)
    print(json.dumps({"version": version("geomstats"), "numpy": version("numpy"),
                      "times": times, "missing": missing}))


if __name__ == "__main__":
    main()
