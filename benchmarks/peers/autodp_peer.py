"""Times autodp on the inputs benchmarks/peers.py wrote; runs inside autodp's own venv.

    python autodp_peer.py WORKDIR ROUNDS

Reads WORKDIR/inputs.json ({"orders": [...], "sigma", "b", "count", "delta"}) and prints
JSON: {"version", "times": {case: seconds per call}, "values": {case: ...}}. autodp's RDP
functions take one order at a time, so a curve is a loop over the orders, as a user writes it.
"""

import json
import sys
import time
import timeit
import warnings
from importlib.metadata import version

warnings.filterwarnings("ignore")  # SciPy's optimizer warns inside get_approxDP


def best(function, rounds, target=0.05):
    """CPU seconds per call, best of rounds; each round long enough for process_time."""
    started = time.process_time()
    function()
    once = max(time.process_time() - started, 1e-7)
    number = max(1, int(target / once))
    timer = timeit.Timer(function, timer=time.process_time)
    return min(timer.repeat(repeat=rounds, number=number)) / number


def main():
    from autodp import mechanism_zoo, rdp_bank, transformer_zoo

    folder, rounds = sys.argv[1], int(sys.argv[2])
    with open(f"{folder}/inputs.json") as stream:
        given = json.load(stream)
    orders = given["orders"]

    def gaussian():
        return [rdp_bank.RDP_gaussian({"sigma": given["sigma"]}, alpha) for alpha in orders]

    def laplace():
        return [rdp_bank.RDP_laplace({"b": given["b"]}, alpha) for alpha in orders]

    def conversion():
        composed = transformer_zoo.Composition()(
            [mechanism_zoo.GaussianMechanism(sigma=given["sigma"])], [given["count"]])
        return composed.get_approxDP(given["delta"])

    functions = {"gaussian_rdp": gaussian, "laplace_rdp": laplace, "conversion": conversion}
    values = {name: function() for name, function in functions.items()}
    times = {name: best(function, rounds) for name, function in functions.items()}
    print(json.dumps({"version": version("autodp"), "numpy": version("numpy"),
                      "times": times, "values": values}))


if __name__ == "__main__":
    main()
