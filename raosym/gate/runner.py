"""The subprocess side of the emitted-code gate (:mod:`raosym.gate.emitted`).

Part of the gate. This file is run as a script (``python -I runner.py``), never imported by
raosym: it reads one JSON request on stdin, ``{"source": module text, "name": module name,
"calls": [{"function": ..., "args": [...], "kwargs": {...}}, ...]}``, imports the module from
that text in this fresh interpreter (so whatever the module does on import, or a crash inside
NumPy or SciPy, cannot touch the raosym run), calls every function as asked and writes one
JSON answer on stdout: the module's public functions (``"public"``) and, per call
(``"answers"``), ``{"values": [...]}`` (the result flattened, floats as
``float.hex`` so nothing is rounded on the way) or ``{"error": "TypeError: ..."}``.

Arguments arrive as JSON numbers or lists; ``{"float": hex}`` marks an exact float (a list of
them becomes a NumPy array, a lone one stays a Python float so the scalar fast paths run).
"""

import json
import sys
import types
import warnings


def _decode(value):
    if isinstance(value, dict):
        return float.fromhex(value["float"])
    if isinstance(value, list):
        import numpy

        return numpy.asarray([_decode(v) for v in value], dtype=float)
    return value


def _call(module, call):
    function = getattr(module, call["function"])
    args = [_decode(a) for a in call["args"]]
    kwargs = {name: _decode(v) for name, v in call["kwargs"].items()}
    import numpy

    try:
        with warnings.catch_warnings():
            # A warning is not a result: the value returned is what the gate judges.
            warnings.simplefilter("ignore")
            result = numpy.asarray(function(*args, **kwargs), dtype=float)
    # Every failure of a generated function is an answer for the gate to report, not a crash.
    except Exception as error:  # noqa: BLE001
        return {"error": f"{type(error).__name__}: {error}"}
    return {"values": [float(v).hex() for v in result.ravel()]}


def main():
    request = json.load(sys.stdin)
    module = types.ModuleType(request["name"])
    # The module raosym just rendered, run in this throw-away interpreter on purpose.
    exec(compile(request["source"], f"{request['name']}.py", "exec"), module.__dict__)  # noqa: S102
    sys.modules[request["name"]] = module
    public = sorted(name for name, value in vars(module).items()
                    if isinstance(value, types.FunctionType) and not name.startswith("_")
                    and getattr(value, "__module__", None) == request["name"])
    json.dump({"answers": [_call(module, call) for call in request["calls"]], "public": public},
              sys.stdout)


if __name__ == "__main__":
    main()
