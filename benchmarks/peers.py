"""raosym's generated modules against geomstats, autodp and dp_accounting, in one run.

Issue 12 asks for the categorical, Dirichlet and normal modules beside geomstats' modules for
the same families; issue 15 for the peers installed in their own environments. This script:

- creates once, under ``--envs`` (default ``~/.cache/raosym-peers``), a virtual environment
  per peer (``python -m venv``, then ``pip install`` of the versions pinned in ``PEERS``);
  a peer whose install fails is reported as not measured, with pip's last line;
- writes the inputs to a temporary folder and runs ``benchmarks/peers/<peer>_peer.py`` in
  the peer's venv, which times the peer's functions (CPU time, best of rounds) and returns
  its values; raosym (``generated/python``) and dp_accounting (the main environment) are timed the same way in this process, in the same run;
- prints one line per figure: raosym's time, the peer's, the ratio raosym/peer, and each
  one's largest relative error against an mpmath reference at 50 digits written here from
  the literature's closed forms (matrices: max |error| / max |reference| per point). Rows
  "adversarial" are accuracy only: points at the simplex's edge, nearly identical pairs,
  large and small scales.

geomstats' categorical points are (p1, p2, p3) with p3 = 1 - p1 - p2 rounded to a float, its
metric the 3 x 3 ambient matrix diag(1/p); it is pulled back to raosym's coordinates (p1, p2)
after the timing, for accuracy only. A function a peer lacks is printed as "not available".
The RDP curves are at the 156 orders of benchmarks/performance.py (sensitivity 1, sigma = 4,
b = 2); the conversion is 52 composed Gaussians at delta = 1e-6, each tool's reported epsilon
against the exact minimum over continuous alpha of the conversion raosym and dp_accounting
use (Balle et al. 2020), found with mpmath. autodp's RDP functions take one order at a time
(its curve is a loop over the orders); dp_accounting has no public curve function (its curve
is an RdpAccountant built and composed once, read from ``_rdp``); each tool's conversion
includes building its composition of 52.

Never part of the pass/fail suite. Run ``raosym generate`` first.

    python benchmarks/peers.py [--quick] [--envs DIR] [--generated DIR]

``--quick``: 2 rounds instead of 5, and fewer reference points. The Dirichlet's distance has
no closed form: its reference pairs lie on the diagonal a1 = a2 = a3, the set fixed by the
permutations of the coordinates (isometries), so a geodesic, along which the distance is the
integral of the speed sqrt(3 psi1(u) - 9 psi1(3u)), computed with mpmath's quadrature.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import mpmath
import numpy as np

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
GENERATED = REPOSITORY / "generated" / "python"
PEER_SCRIPTS = Path(__file__).resolve().parent / "peers"
#: What each venv gets. geomstats 2.8.0 imports numpy.trapz, which NumPy 2.4 removed.
PEERS = {"geomstats": ["geomstats==2.8.0", "numpy==2.3.5"], "autodp": ["autodp==0.2.3.1"]}
#: 156 orders, as in benchmarks/performance.py.
ORDERS = np.concatenate([1 + np.arange(1, 100) / 10, np.arange(11, 64), [128, 256, 512, 1024]])
SIGMA, B, COUNT, DELTA = 4.0, 2.0, 52, 1e-6
mpmath.mp.dps = 50


# ----------------------------------------------------------------------------- environments


def peer_python(envs: Path, peer: str) -> tuple[Path | None, str]:
    """The venv's python with the pinned packages installed (created on first use), or None
    and why not. A marker file records the pins, so a later run reuses the venv."""
    folder, pins = envs / peer, PEERS[peer]
    python, marker = folder / "bin" / "python", folder / "raosym-pins.txt"
    if marker.exists() and marker.read_text() == "\n".join(pins) and python.exists():
        return python, "cached"
    steps = ([] if python.exists() else [[sys.executable, "-m", "venv", str(folder)]])
    steps.append([str(python), "-m", "pip", "install", "--quiet", *pins])
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            what = "python -m venv" if "venv" in step else "pip install " + " ".join(pins)
            return None, f"{what} failed: {last}"
    marker.write_text("\n".join(pins))
    return python, "installed"


def run_peer(python: Path, peer: str, folder: Path, rounds: int) -> tuple[dict | None, str]:
    """The peer script's JSON report, or None and its error's last line."""
    done = subprocess.run([str(python), str(PEER_SCRIPTS / f"{peer}_peer.py"), str(folder),
                           str(rounds)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["no output"])[-1]
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


# ----------------------------------------------------------------------------- timing, output


def best(function, rounds: int, target: float = 0.05) -> float:
    """CPU seconds per call, best of rounds (the machine is shared), as in the peer scripts."""
    started = time.process_time()
    function()
    once = max(time.process_time() - started, 1e-7)
    number = max(1, int(target / once))
    timer = timeit.Timer(function, timer=time.process_time)
    return min(timer.repeat(repeat=rounds, number=number)) / number


def show(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value * 1e6:.1f} µs" if value < 1e-3 else f"{value * 1e3:.2f} ms"


def error(value: float | None) -> str:
    return "—" if value is None else f"{value:.1e}"


def row(label: str, ours: float | None, theirs: float | None, our_error=None,
        their_error=None, note: str = "") -> None:
    """One figure: raosym's and the peer's CPU time per call, ratio, largest relative error."""
    ratio = f"{ours / theirs:8.3g}" if ours and theirs else "       —"
    print(f"  {label:<38} {show(ours):>10} {show(theirs):>10} {ratio} "
          f"{error(our_error):>9} {error(their_error):>9}{'  ' + note if note else ''}")


def header(title: str, peer: str) -> None:
    print(f"\n{title}")
    print(f"  {'figure':<38} {'raosym':>10} {peer:>10} {'ratio':>8} {'err raosym':>9} "
          f"{'err ' + peer[:5]:>9}")


def relative_error(values, reference) -> float:
    """Largest over points of max |value - reference| / max |reference| (matrices: per
    point over its entries, so zero entries do not divide)."""
    values, reference = np.asarray(values, dtype=float), np.asarray(reference, dtype=float)
    axes = tuple(range(1, reference.ndim)) if reference.ndim > 1 else None
    with np.errstate(all="ignore"):  # a peer's inf or nan is reported as such
        if axes is None:
            return float(np.max(np.abs(values - reference) / np.abs(reference)))
        return float(np.max(np.max(np.abs(values - reference), axis=axes)
                            / np.max(np.abs(reference), axis=axes)))


def load(folder: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"peers_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- references


def categorical_metric(point):
    """Fisher metric in (p1, p2): diag(1/p_i) + 1/p3, p3 = 1 - p1 - p2 exactly."""
    p1, p2 = mpmath.mpf(point[0]), mpmath.mpf(point[1])
    last = 1 / (1 - p1 - p2)
    return [[1 / p1 + last, last], [last, 1 / p2 + last]]


def categorical_distance(p, q):
    """2 arccos(sum sqrt(p_i q_i)) (the round sphere of radius 2)."""
    p = [mpmath.mpf(p[0]), mpmath.mpf(p[1])]
    q = [mpmath.mpf(q[0]), mpmath.mpf(q[1])]
    p.append(1 - p[0] - p[1])
    q.append(1 - q[0] - q[1])
    return 2 * mpmath.acos(sum(mpmath.sqrt(a * b) for a, b in zip(p, q)))


def dirichlet_metric(a):
    """psi1(a_i) delta_ij - psi1(sum a)."""
    a = [mpmath.mpf(x) for x in a]
    both = mpmath.psi(1, sum(a))
    return [[(mpmath.psi(1, a[i]) if i == j else 0) - both for j in range(3)] for i in range(3)]


def dirichlet_diagonal_distance(p, q):
    """Between (s, s, s) and (t, t, t): the integral of sqrt(3 psi1(u) - 9 psi1(3u)) from s
    to t (the diagonal is a geodesic: see the module docstring)."""
    s, t = mpmath.mpf(p[0]), mpmath.mpf(q[0])
    assert p[0] == p[1] == p[2] and q[0] == q[1] == q[2], "a reference pair off the diagonal"
    return abs(mpmath.quad(lambda u: mpmath.sqrt(3 * mpmath.psi(1, u) - 9 * mpmath.psi(1, 3 * u)),
                           [s, t]))


def normal_metric(point):
    sigma = mpmath.mpf(point[1])
    return [[1 / sigma**2, 0], [0, 2 / sigma**2]]


def normal_distance(p, q):
    """2 sqrt(2) asinh(sqrt(dmu^2/2 + dsigma^2) / (2 sqrt(s1 s2)))."""
    (m1, s1), (m2, s2) = [mpmath.mpf(x) for x in p], [mpmath.mpf(x) for x in q]
    return 2 * mpmath.sqrt(2) * mpmath.asinh(
        mpmath.sqrt((m1 - m2) ** 2 / 2 + (s1 - s2) ** 2) / (2 * mpmath.sqrt(s1 * s2)))


def reference(function, *arrays, count: int) -> np.ndarray:
    """The reference at the first ``count`` points, rounded to floats at the end only."""
    rows = [function(*(a[i] for a in arrays))
            for i in range(min(count, len(arrays[0])))]
    return np.array([np.array(r, dtype=object).astype(float) if isinstance(r, list) else float(r)
                     for r in rows])


# ----------------------------------------------------------------------------- inputs


def geometry_inputs(rng) -> dict[str, list[np.ndarray]]:
    """Per case "family:quantity:size", the points in raosym's coordinates; size 1, N
    (10**4) or check (adversarial, accuracy only)."""
    n = 10**4
    simplex = rng.dirichlet([1, 1, 1], (2, n))[..., :2]
    edge = np.array([[1e-12, 0.3], [0.5, 0.5 - 1e-13], [1 - 1e-10, 5e-11], [1e-300, 1e-300]])
    near = simplex[0, :4] * (1 + 1e-9)
    alphas = rng.uniform(0.1, 20, (n, 3))
    normal = np.column_stack((rng.normal(size=2 * n), rng.uniform(0.5, 2.0, 2 * n))).reshape(2, n, 2)
    scales = np.array([[1e9, 1e8], [0.0, 1e-8], [3.0, 1e150], [-1e-5, 2e-150]])
    return {
        "categorical:metric:1": [simplex[0, :1]], "categorical:metric:N": [simplex[0]],
        "categorical:metric:check": [edge],
        "categorical:dist:1": [simplex[0, :1], simplex[1, :1]],
        "categorical:dist:N": [simplex[0], simplex[1]],
        "categorical:dist:check": [np.vstack((edge, simplex[0, :4])),
                                   np.vstack((edge[::-1], near))],
        "dirichlet:metric:1": [alphas[:1]], "dirichlet:metric:N": [alphas],
        "dirichlet:metric:check": [np.array([[1e-6, 1e-6, 1e-6], [1e6, 2e6, 3e6],
                                             [1e-4, 1.0, 1e5], [1e-8, 50.0, 1e8]])],
        "dirichlet:dist:1": [np.full((1, 3), 0.7), np.full((1, 3), 5.0)],
        "dirichlet:dist:check": [np.repeat([[0.05], [1.0], [3.0], [0.2]], 3, axis=1),
                                 np.repeat([[40.0], [1.0 + 1e-9], [3.5], [15.0]], 3, axis=1)],
        "normal:metric:1": [normal[0, :1]], "normal:metric:N": [normal[0]],
        "normal:metric:check": [scales],
        "normal:dist:1": [normal[0, :1], normal[1, :1]],
        "normal:dist:N": [normal[0], normal[1]],
        "normal:dist:check": [scales, scales * np.array([1 + 1e-12, 1 - 1e-11])],
    }


def geomstats_arguments(name: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """geomstats' representation: the categorical's third coordinate appended; one point
    unbatched, as a user calls it."""
    if name.startswith("categorical"):
        arrays = [np.column_stack((a, 1 - a.sum(axis=1))) for a in arrays]
    return [a[0] for a in arrays] if name.endswith(":1") else arrays


def pullback(metric: np.ndarray) -> np.ndarray:
    """geomstats' ambient categorical metric in raosym's coordinates: J^T G J, p3 = 1 - p1 - p2."""
    jacobian = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    return np.einsum("ai,...ab,bj->...ij", jacobian, metric, jacobian)


# ----------------------------------------------------------------------------- geomstats


def raosym_functions(generated: Path) -> dict:
    """family -> (Fisher function, distance function, their mpmath references); None where
    raosym or the reference has none."""
    categorical, gaussian = load(generated, "categorical3"), load(generated, "gaussian")
    dirichlet = load(generated, "dirichlet3")
    return {
        "categorical": (categorical.fisher_information, categorical.rao_distance,
                        categorical_metric, categorical_distance),
        "dirichlet": (dirichlet.fisher_information, dirichlet.rao_distance, dirichlet_metric,
                      dirichlet_diagonal_distance),
        "normal": (gaussian.fisher_information, gaussian.rao_distance, normal_metric,
                   normal_distance),
    }


def geometry_row(name: str, arrays, ours, theirs, their_time, exact, rounds: int,
                 count: int, notes: list[str]) -> None:
    """Time raosym's function on the case's inputs (unless adversarial) and print its row:
    both times, and both errors against ``exact`` at the first ``count`` points."""
    family, quantity, size = name.split(":")
    label = f"{family} {'metric' if quantity == 'metric' else 'distance'}, " + {
        "1": "1 point" if quantity == "metric" else "1 pair",
        "N": f"1e4 {'points' if quantity == 'metric' else 'pairs'}",
        "check": f"adversarial ({len(arrays[0])})"}[size]
    given = [a[0] for a in arrays] if size == "1" else arrays
    our_values = our_time = None
    if ours is not None:
        try:
            our_values = ours(*given)
        except ValueError as failure:
            notes.append(f"raosym raised {failure}"[:120])
        else:
            our_time = None if size == "check" else best(lambda: ours(*given), rounds)
    expected = reference(exact, *arrays, count=count) if exact else None
    errors = [None, None]
    if expected is None:
        notes.append("no closed-form reference")
    else:
        for index, values in enumerate((our_values, theirs)):
            if values is not None:
                shaped = np.reshape(values, (-1,) + expected.shape[1:])[:len(expected)]
                errors[index] = relative_error(shaped, expected)
        if count < len(arrays[0]):
            notes.append(f"errors at the first {count}")
    row(label, our_time, their_time, *errors, "; ".join(notes))


def geomstats_section(arguments, folder: Path, rounds: int, count: int) -> None:
    """Categorical, Dirichlet and univariate normal against geomstats."""
    rng = np.random.default_rng(12)
    inputs = geometry_inputs(rng)
    np.savez(folder / "inputs.npz", **{f"{name}|{i}": a for name, arrays in inputs.items()
                                        for i, a in enumerate(geomstats_arguments(name, arrays))})
    python, status = peer_python(arguments.envs, "geomstats")
    report, why = (run_peer(python, "geomstats", folder, rounds) if python else (None, status))
    functions = raosym_functions(arguments.generated)
    if report is None:
        print(f"\ngeomstats not measured: {why}")
        peer_values, peer_times, missing, version = {}, {}, {}, "—"
    else:
        version = report["version"]
        print(f"\ngeomstats {version} (numpy {report['numpy']}) in {arguments.envs / 'geomstats'}"
              f" ({status})")
        with np.load(folder / "geomstats_out.npz") as data:
            peer_values = {key: data[key] for key in data.files}
        peer_times, missing = report["times"], report["missing"]
    header("Fisher metric and Rao distance: raosym vs geomstats (CPU time per call)", "geomstats")
    for name, arrays in inputs.items():
        family, quantity, _ = name.split(":")
        fisher, distance, metric_reference, distance_reference = functions[family]
        ours = fisher if quantity == "metric" else distance
        theirs = peer_values.get(name)
        if theirs is not None and family == "categorical" and quantity == "metric":
            theirs = pullback(theirs)
        notes = []
        if family == "categorical" and name.endswith("check") and theirs is not None:
            notes.append("geomstats gets p3 = 1 - p1 - p2 rounded to a float")
        if name in missing:
            notes.append(f"geomstats {version} failed: {missing[name]}")
        exact = metric_reference if quantity == "metric" else distance_reference
        geometry_row(name, arrays, ours, theirs, peer_times.get(name), exact, rounds, count,
                     notes)
    if report is not None:
        print(f"  normal with fixed covariance (normal2_fixed), isotropic vector "
              f"(gaussian_vector3): not available in geomstats {version} (its multivariate "
              f"families let the covariance vary: DiagonalNormalDistributions, "
              f"GeneralNormalDistributions)")


# ----------------------------------------------------------------------------- privacy


def laplace_rdp(alpha, b):
    """Mironov (2017), Table II, sensitivity 1."""
    alpha, b = mpmath.mpf(alpha), mpmath.mpf(b)
    return mpmath.log(alpha / (2 * alpha - 1) * mpmath.exp((alpha - 1) / b)
                      + (alpha - 1) / (2 * alpha - 1) * mpmath.exp(-alpha / b)) / (alpha - 1)


def best_conversion() -> float:
    """The least epsilon over continuous alpha of eps = C rdp(alpha) + log((a-1)/a)
    - (log delta + log alpha)/(alpha-1), C = 52, rdp = alpha/(2 sigma^2): mpmath's root of
    the derivative, rho + (log delta + log alpha)/(alpha - 1)^2, from alpha = 3 and 4."""
    rho = mpmath.mpf(COUNT) / (2 * SIGMA**2)

    def epsilon(a):
        return rho * a + mpmath.log((a - 1) / a) - (mpmath.log(DELTA) + mpmath.log(a)) / (a - 1)

    alpha = mpmath.findroot(lambda a: rho + (mpmath.log(DELTA) + mpmath.log(a)) / (a - 1) ** 2,
                            (3, 4), solver="secant")
    return float(epsilon(alpha))


def dp_accounting_functions():
    """dp_accounting's RDP accountant (main environment): curves and conversion, or None."""
    try:
        import dp_accounting
        from dp_accounting.rdp import rdp_privacy_accountant as rdp
    except ImportError:
        return None, "not importable"
    orders = list(ORDERS)

    def curve(event):
        accountant = rdp.RdpAccountant(orders)
        accountant.compose(event)
        return accountant._rdp  # the curve itself: the accountant keeps it in _rdp

    def conversion():
        accountant = rdp.RdpAccountant(orders)
        accountant.compose(dp_accounting.GaussianDpEvent(SIGMA), COUNT)
        return accountant.get_epsilon(DELTA)

    from importlib.metadata import version
    return {"gaussian_rdp": lambda: curve(dp_accounting.GaussianDpEvent(SIGMA)),
            "laplace_rdp": lambda: curve(dp_accounting.LaplaceDpEvent(B)),
            "conversion": conversion}, version("dp_accounting")


def privacy_section(arguments, folder: Path, rounds: int) -> None:
    """RDP curves and the (eps, delta) conversion: raosym vs autodp (its venv) and
    dp_accounting (this process)."""
    from raosym import accounting

    gaussian = load(arguments.generated, "gaussian_location")
    laplace = load(arguments.generated, "laplace_location")
    mechanism = accounting.load_mechanism("gaussian_location", arguments.generated.parent)

    def conversion():
        """Composed inside the timing, as the peers' accountants are."""
        curve = mechanism.curve(sensitivity=1.0, sigma=SIGMA).repeated(COUNT)
        return accounting.dp_epsilon(curve, DELTA).epsilon

    ours = {"gaussian_rdp": lambda: gaussian.rdp_epsilon(ORDERS, sensitivity=1.0, sigma=SIGMA),
            "laplace_rdp": lambda: laplace.rdp_epsilon(ORDERS, sensitivity=1.0, b=B),
            "conversion": conversion}
    (folder / "inputs.json").write_text(json.dumps(
        {"orders": ORDERS.tolist(), "sigma": SIGMA, "b": B, "count": COUNT, "delta": DELTA}))
    python, status = peer_python(arguments.envs, "autodp")
    report, why = (run_peer(python, "autodp", folder, rounds) if python else (None, status))
    dp, dp_version = dp_accounting_functions()
    exact = {"gaussian_rdp": np.array([float(mpmath.mpf(a) / (2 * mpmath.mpf(SIGMA) ** 2))
                                       for a in ORDERS]),
             "laplace_rdp": np.array([float(laplace_rdp(a, B)) for a in ORDERS]),
             "conversion": best_conversion()}
    if report is None:
        print(f"\nautodp not measured: {why}")
    else:
        print(f"\nautodp {report['version']} (numpy {report['numpy']}) in "
              f"{arguments.envs / 'autodp'} ({status}); dp_accounting {dp_version} here")
    labels = {"gaussian_rdp": "Gaussian RDP curve, 156 orders",
              "laplace_rdp": "Laplace RDP curve, 156 orders",
              "conversion": f"(eps, delta) of {COUNT} Gaussians"}
    our_times = {name: best(function, rounds) for name, function in ours.items()}
    dp_times = {name: best(function, rounds) for name, function in dp.items()} if dp else {}
    for peer, times, values in (
            ("autodp", report and report["times"], report and report["values"]),
            ("dp_acc", dp_times, {name: function() for name, function in dp.items()} if dp else None)):
        header(f"RDP curves and conversion: raosym vs {peer} (CPU time per call)", peer)
        for name, label in labels.items():
            our_error = relative_error(ours[name](), exact[name])
            if not times:
                row(label, our_times[name], None, our_error, note=f"{peer} not measured")
                continue
            row(label, our_times[name], times[name], our_error,
                relative_error(values[name], exact[name]))
    print(f"  epsilon at delta = {DELTA:g}: exact minimum over alpha {exact['conversion']:.15g};"
          f" raosym {ours['conversion']():.15g}"
          + (f"; dp_accounting {dp['conversion']():.15g}" if dp else "")
          + (f"; autodp {report['values']['conversion']:.15g}" if report else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds, fewer reference points")
    parser.add_argument("--envs", type=Path, default=Path.home() / ".cache" / "raosym-peers")
    parser.add_argument("--generated", type=Path, default=GENERATED)
    arguments = parser.parse_args()
    arguments.envs.mkdir(parents=True, exist_ok=True)
    rounds, count = (2, 100) if arguments.quick else (5, 500)
    with tempfile.TemporaryDirectory() as folder:
        geomstats_section(arguments, Path(folder), rounds, count)
        privacy_section(arguments, Path(folder), rounds)


if __name__ == "__main__":
    main()
