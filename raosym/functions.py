"""SymPy functions and rewrites for float evaluation that every stage shares (a leaf module).

The derive stage writes its stable forms with :class:`expm1mx`, :class:`log1pmx` and
:class:`log_ratio` (functions SymPy does not have, never evaluated symbolically); the verify
stage evaluates them through their definitions; the emit stage prints them as the generated
helpers. :func:`with_complementary_erf` is the rewrite of ``1 +- erf`` that both the verify
stage's mpmath and the generated quadratures evaluate; :class:`softplus` is
``log(1 + exp(u))`` in the log-densities of a mechanism's outputs. Kept below the pipeline, so that emit
prints what derive wrote without importing derive's computations.
"""

from __future__ import annotations

import sympy


#: The rewriting rules of the cancellation-free forms, by number: the derive stage cites them
#: in its steps, the appendix states them once (a lemma) and refers to them.
RULES = {
    1: "each term multiplied out as c_i exp(x_i)",
    2: "`Σ w_i exp(y_i) + r = Σ w_i phi(y_i) + (r + Σ w_i + Σ w_i y_i)` with "
       "`phi(y) = exp(y) - 1 - y >= 0`",
    3: "`log(Σ c_i exp(x_i)) = M + log(Σ c_i exp(x_i - M))` for every M",
    4: "`log(A) = log(1 + (A - 1)) = -log(1 + (1/A - 1))` and "
       "`w exp(y) - w = w (exp(y) - 1)`, with `A - 1` and `1/A - 1` in exact form",
}


class expm1mx(sympy.Function):
    """``exp(x) - 1 - x`` (>= 0 for every real x), evaluated without cancellation by the
    generated code. Never evaluated symbolically; ``rewrite(sympy.exp)`` gives the definition."""

    nargs = 1

    def _eval_rewrite_as_exp(self, x, **kwargs):
        return sympy.exp(x) - 1 - x

    def _eval_is_nonnegative(self):
        return True if self.args[0].is_real else None

    def _latex(self, printer):
        return rf"\operatorname{{\varphi}}\left({printer._print(self.args[0])}\right)"


class log1pmx(sympy.Function):
    """``log(1 + x) - x`` (<= 0 for x > -1), evaluated without cancellation by the generated
    code. Never evaluated symbolically; ``rewrite(sympy.log)`` gives the definition."""

    nargs = 1

    def _eval_rewrite_as_log(self, x, **kwargs):
        return sympy.log(1 + x) - x

    def _latex(self, printer):
        argument = printer._print(self.args[0])
        return rf"\left(\log\left(1 + {argument}\right) - {argument}\right)"


class log_ratio(sympy.Function):
    """``log(1 + d)`` given ``d = A - 1`` and ``e = 1/A - 1`` both in exact form: the generated
    code takes ``log1p(d)`` for ``d >= 0`` and ``-log1p(e)`` otherwise, so the argument of
    log1p is never near -1 (where it is ill-conditioned): ``log(p/(1-p))`` keeps its digits
    near p = 1/2 *and* near 0 and 1. Never evaluated symbolically."""

    nargs = 2

    def _eval_rewrite_as_log(self, d, e, **kwargs):
        return sympy.log(1 + d)

    def _latex(self, printer):
        return printer._print(sympy.log(1 + self.args[0]))


class softplus(sympy.Function):
    """``log(1 + exp(u))``, printed as ``np.logaddexp(0, u)``: the logistic log-density's
    ``log(1 + exp((Delta - x)/s))`` is inf - inf in float at x = -800 s written out, and
    exact this way. Never evaluated symbolically."""

    nargs = 1


def _complementary_erf(add: sympy.Add) -> sympy.Expr:
    """``1 + erf(z)`` as ``erfc(-z)`` and ``1 - erf(z)`` as ``erfc(z)``: the sum is 0 at any
    working precision once ``erf(z)`` rounds to -1 (skew-normal densities far in a tail),
    while ``erfc`` keeps its digits at every argument."""
    terms = list(add.args)
    if sympy.S.One not in terms:
        return add
    for index, term in enumerate(terms):
        coefficient, function = term.as_coeff_Mul()
        if isinstance(function, sympy.erf) and coefficient in (1, -1):
            rest = [t for k, t in enumerate(terms) if k != index and t != sympy.S.One]
            argument = function.args[0] if coefficient == -1 else -function.args[0]
            return sympy.Add(sympy.erfc(argument), *rest)
    return add


def with_complementary_erf(expr):
    """:func:`_complementary_erf` throughout an expression or a list of them."""
    if isinstance(expr, (list, tuple)):
        return type(expr)(with_complementary_erf(e) for e in expr)
    return expr.replace(lambda e: isinstance(e, sympy.Add) and e.has(sympy.erf),
                        _complementary_erf)
