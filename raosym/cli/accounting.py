"""The ``raosym account`` and ``raosym calibrate`` commands (registered by :func:`add_commands`).

Thin: the arguments are read here (their NAME=VALUE parts by :mod:`raosym.cli.arguments`),
the accounting itself is :mod:`raosym.accounting`, which this module formats. Neither
imports SymPy.
"""

from __future__ import annotations

import json
import re

from raosym.accounting import (
    CONVERSIONS,
    DEFAULT_SENSITIVITY,
    Mechanism,
    Release,
    account,
    calibrate_dp,
    calibrate_kl,
    calibrate_rao,
    describe_values,
    load_mechanism,
    with_default_sensitivity,
)
from raosym.cli.arguments import name_and_value, named_assignments, number, parameter_options
from raosym.errors import AccountingError


def add_commands(subparsers) -> None:
    """Register ``account`` and ``calibrate`` on the ``raosym`` command's subparsers."""
    account_parser = subparsers.add_parser(
        "account", allow_abbrev=False,
        help="Rao-DP, KL and (ε, δ)-DP of repeated releases of a mechanism",
        description="Compose repeated releases of a mechanism and report its Rao-DP budget "
                    "and its (ε, δ)-DP through Rényi DP, minimized over continuous α under "
                    "Mironov's Proposition 3 and Balle et al.'s Theorem 21.")
    _add_mechanism_arguments(account_parser)
    account_parser.add_argument("--delta", type=float, default=1e-6,
                                help="δ of the (ε, δ)-DP guarantee (default 1e-6)")
    account_parser.add_argument(
        "--with", dest="also", action="append", default=[],
        metavar="MECHANISM:NAME=VALUE[:...][:repeat=N]",
        help="another mechanism released as well (repeatable), composed with the first, e.g. "
             "laplace_location:b=2:repeat=10 (sensitivity defaults to 1)")
    account_parser.add_argument(
        "--accountant", choices=("rdp", "pld"), default="rdp",
        help="rdp (default): RDP curves converted to (ε, δ); pld: also the tight ε of the "
             "privacy-loss distributions composed by Google's dp_accounting (pip install "
             "'raosym[dp]'), reported as dp.pld")
    account_parser.add_argument(
        "--pld-interval", type=float, default=None, metavar="H",
        help="with --accountant pld: the spacing of the privacy-loss grid (default 1e-4); "
             "the pessimistic ε is at most releases·H above the exact one")
    account_parser.set_defaults(run=_account_command, takes_parameter_options=True)

    calibrate_parser = subparsers.add_parser(
        "calibrate", allow_abbrev=False,
        help="find the noise parameter that meets a target privacy budget",
        description="Find the value of one mechanism parameter (the noise scale, or p for "
                    "randomized response) at which the releases meet a target: Rao-DP "
                    "(--theta), (ε, δ)-DP through RDP (--epsilon and --delta) or KL (--kl).")
    _add_mechanism_arguments(calibrate_parser)
    target = calibrate_parser.add_argument_group("target (one of)")
    target.add_argument("--theta", type=float, help="total Rao-DP budget θ")
    target.add_argument("--epsilon", type=float, help="ε of (ε, δ)-DP (with --delta)")
    target.add_argument("--delta", type=float, help="δ of (ε, δ)-DP (with --epsilon)")
    target.add_argument("--kl", type=float, help="total KL divergence")
    calibrate_parser.add_argument("--conversion", choices=sorted(CONVERSIONS), default="balle",
                                  help="RDP to (ε, δ) conversion for --epsilon (default balle)")
    calibrate_parser.add_argument("--solve", metavar="NAME",
                                  help="the parameter to calibrate (default: the one not "
                                       "given); --solve sensitivity finds the largest "
                                       "sensitivity the given noise affords")
    calibrate_parser.set_defaults(run=_calibrate_command, takes_parameter_options=True)


def _add_mechanism_arguments(parser) -> None:
    parser.add_argument("--mechanism", required=True, metavar="NAME",
                        help="a generated mechanism, e.g. gaussian_location, laplace_location, "
                             "bernoulli (randomized response)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a mechanism parameter by its name in the derivation file "
                             "(repeatable); --NAME VALUE is the same for any parameter, "
                             "e.g. --s 2 for Cauchy or logistic noise, --N 1.5")
    for name, text in (("sigma", "Gaussian noise std"), ("b", "Laplace noise scale"),
                       ("p", "randomized response: probability of the truth")):
        parser.add_argument(f"--{name}", type=float, default=None, help=f"{text} (= --param "
                                                                          f"{name}=VALUE)")
    parser.add_argument("--sensitivity", type=float, default=None,
                        help=f"query sensitivity Δ of an additive mechanism (default "
                             f"{DEFAULT_SENSITIVITY:g})")
    parser.add_argument("--repeat", type=int, default=1,
                        help="number of independent releases composed (default 1)")
    parser.add_argument("--generated", default=None, metavar="DIR",
                        help="the generated folder holding python/NAME.py (default: generated)")
    parser.add_argument("--json", action="store_true", help="one JSON object")


def _parameter_values(arguments) -> dict:
    values: dict[str, float] = {}
    for item in arguments.param:
        name, text = name_and_value(item, "--param")
        values[name] = number(text, f"--param {name}")
    given = [(name, getattr(arguments, name)) for name in ("sigma", "b", "p", "sensitivity")]
    given += parameter_options(getattr(arguments, "extra", None) or [])
    for name, value in given:
        if value is not None:
            if name in values:
                raise AccountingError(f"{name} is given twice (--{name} and --param {name}=...)")
            values[name] = number(value, f"--{name}")
    return values


def _mechanism_and_values(arguments) -> tuple[Mechanism, dict]:
    mechanism = load_mechanism(arguments.mechanism, arguments.generated)
    values = with_default_sensitivity(mechanism, _parameter_values(arguments),
                                      getattr(arguments, "solve", None))
    if arguments.repeat < 1:
        raise AccountingError(f"--repeat must be a positive integer; got {arguments.repeat}")
    return mechanism, values


def _account_command(arguments) -> int:
    mechanism, values = _mechanism_and_values(arguments)
    releases = [Release(mechanism, values, arguments.repeat)]
    releases += [parse_release(text, arguments.generated) for text in arguments.also]
    summary = account(releases, delta=arguments.delta)
    if arguments.accountant == "pld":
        from raosym import pld

        summary["dp"]["pld"] = pld.pld_epsilon(
            releases, arguments.delta,
            pld.INTERVAL if arguments.pld_interval is None else arguments.pld_interval).as_json()
    elif arguments.pld_interval is not None:
        raise AccountingError("--pld-interval goes with --accountant pld")
    print(json.dumps(summary) if arguments.json else _account_text(summary))
    return 0


def parse_release(text: str, generated) -> Release:
    """``MECHANISM:NAME=VALUE[:NAME=VALUE...][:repeat=N]`` (the argument of ``--with``)."""
    name, assignments = named_assignments(text, f"--with {text!r}")
    values: dict[str, float] = {}
    repeat = 1
    for key, value in assignments:
        if key == "repeat":
            if not re.fullmatch(r"[0-9]+", value) or int(value) < 1:
                raise AccountingError(f"--with {text!r}: repeat must be a positive integer")
            repeat = int(value)
        else:
            values[key] = number(value, f"--with {name}: {key}")
    mechanism = load_mechanism(name, generated)
    return Release(mechanism, with_default_sensitivity(mechanism, values), repeat)


def _account_text(summary: dict) -> str:
    lines = []
    for row in summary["releases"]:
        count = row["repeat"]
        line = (f"{row['mechanism']} ({describe_values(row['parameters'])}) × {count} "
                f"[{row['module']}]")
        if "sensitivity_norm" in row:
            line += (f"\n  sensitivity bounds the {row['sensitivity_norm']} norm of the vector "
                     "query's change (every value below is the supremum over that ball)")
        if "theta_per_release" in row:
            line += f"\n  Rao-DP θ = {row['theta_per_release']:.10g} per release"
        if "kl_per_release" in row:
            line += f"; KL = {row['kl_per_release']:.10g} per release"
        lines.append(line)
    lines.append("composed:")
    if "rao_dp" in summary:
        lines.append(f"  Rao-DP   θ = {summary['rao_dp']['theta']:.10g}  (distances taken in the "
                     "family with the noise scale fixed; θ adds in quadrature)")
    if "kl" in summary:
        lines.append(f"  KL       {summary['kl']['total']:.10g}")
    for dp in (summary["dp"][conversion] for conversion in CONVERSIONS):
        note = ("  (minimum at the end of the α range: the curve flattens)"
                if dp["at_boundary"] else "")
        lines.append(f"  (ε, δ)   ε = {dp['epsilon']:.10f} at δ = {dp['delta']:g}, "
                     f"optimal α = {dp['alpha']:.6g}  [{dp['reference']}]{note}")
    if "pld" in summary["dp"]:
        from raosym.pld import guarantee_text

        lines.append(guarantee_text(summary["dp"]["pld"]))
    return "\n".join(lines)


def _calibrate_command(arguments) -> int:
    mechanism, values = _mechanism_and_values(arguments)
    targets = [arguments.theta is not None, arguments.epsilon is not None,
               arguments.kl is not None]
    if sum(targets) != 1:
        raise AccountingError("give exactly one target: --theta, --epsilon with --delta, or --kl")
    if (arguments.epsilon is None) != (arguments.delta is None):
        raise AccountingError("--epsilon and --delta go together")
    if arguments.theta is not None:
        result = calibrate_rao(mechanism, arguments.theta, values, repeat=arguments.repeat,
                               solve=arguments.solve)
    elif arguments.epsilon is not None:
        result = calibrate_dp(mechanism, arguments.epsilon, arguments.delta, values,
                              repeat=arguments.repeat, conversion=arguments.conversion,
                              solve=arguments.solve)
    else:
        result = calibrate_kl(mechanism, arguments.kl, values, repeat=arguments.repeat,
                              solve=arguments.solve)
    given = {k: v for k, v in values.items() if k != result.parameter}
    if arguments.json:
        print(json.dumps({"mechanism": mechanism.name, "definition": result.definition,
                          "parameter": result.parameter, "value": result.value,
                          "given": given, "target": result.target, "method": result.method}))
    else:
        target = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in result.target.items())
        print(f"mechanism {mechanism.name} ({describe_values(given) or 'no other parameter'}): "
              f"{result.parameter} = {result.value:.12g} meets {result.definition} {target}  "
              f"[{result.method}]")
    return 0
