"""Privacy accounting at run time: composition, conversion to (ε, δ)-DP and calibration.

Where it sits: after the pipeline, and without SymPy (``import raosym.accounting`` imports
NumPy only; SciPy when a conversion or a calibration runs). ``raosym generate`` emits, for
every noise mechanism, the per-release accounting functions derived and verified from its
density; this package is the numeric layer on top of them, and nothing here is derived or
generated:

- :mod:`~raosym.accounting.rdp`: RDP curves, their composition (they add; Mironov 2017,
  Proposition 1) and conversion to (ε, δ)-DP over continuous α (Mironov 2017, Proposition 3;
  Balle et al. 2020, Theorem 21);
- :mod:`~raosym.accounting.rao`: Rao-DP budgets, which compose as ``sqrt(θ1² + θ2² + ...)``
  (Soto 2025);
- :mod:`~raosym.accounting.mechanisms`: a generated module behind :class:`Mechanism`
  (:func:`load_mechanism`; its parameters' domains from the module's ``MECHANISM_DOMAINS``);
- :mod:`~raosym.accounting.calibrate`: the noise parameter that meets a target budget under
  Rao-DP, (ε, δ)-DP through RDP, or KL;
- :mod:`~raosym.accounting.releases`: :func:`account`, everything above for a sequence of
  :class:`Release` (a mechanism, its parameter values and a number of repeats); not named
  ``account.py``, whose attribute the function of that name would shadow.

The commands ``raosym account`` and ``raosym calibrate`` are :mod:`raosym.cli.accounting`.
"""

from raosym.accounting.calibrate import (
    Calibration,
    calibrate_dp,
    calibrate_kl,
    calibrate_rao,
    solve_parameter,
)
from raosym.accounting.mechanisms import (
    ACCOUNTING_FUNCTIONS,
    DEFAULT_SENSITIVITY,
    Mechanism,
    available_mechanisms,
    describe_values,
    generated_folder,
    import_by_path,
    load_mechanism,
    with_default_sensitivity,
)
from raosym.accounting.rao import compose_rao, repeated_rao
from raosym.accounting.rdp import (
    CONVERSIONS,
    DpGuarantee,
    RdpCurve,
    compose,
    compose_orders,
    conversion_epsilon,
    dp_epsilon,
    dp_epsilon_at_orders,
)
from raosym.accounting.releases import Release, account
from raosym.errors import AccountingError, AccountingFailure

__all__ = [
    "ACCOUNTING_FUNCTIONS", "CONVERSIONS", "DEFAULT_SENSITIVITY", "AccountingError",
    "AccountingFailure", "Calibration", "DpGuarantee", "Mechanism", "RdpCurve", "Release",
    "account", "available_mechanisms", "calibrate_dp", "calibrate_kl", "calibrate_rao",
    "compose", "compose_orders", "compose_rao", "conversion_epsilon", "describe_values",
    "dp_epsilon", "dp_epsilon_at_orders", "generated_folder", "import_by_path",
    "load_mechanism", "repeated_rao", "solve_parameter", "with_default_sensitivity",
]
