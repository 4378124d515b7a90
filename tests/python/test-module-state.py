"""The _backplane extension keeps its state per module object
(multi-phase initialisation, PEP 489): a second instance of the module,
made from the same spec, has its own Tensor and Op types, its own
exception classes and its own scalar routing, and both work side by side;
a subclass made in Python finds its module; a second instance that is
dropped is collected without harm to the first."""

import gc
import importlib.util
import os
import sys

import taplib as t

np = t.require("numpy")

try:
    import backplane as bp
    from backplane import _backplane as first
except ImportError as e:
    t.bail_out(f"the backplane package does not import: {e}")

CPU = os.environ.get("BP_TEST_CPU_PLUGIN")
if not CPU:
    t.skip_all("BP_TEST_CPU_PLUGIN is not set")
bp.load(CPU)


def new_instance():
    """A second module object of the extension, from the same spec (the
    import system's cache left alone)."""
    spec = importlib.util.find_spec("backplane._backplane")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


second = new_instance()
t.ok(second is not first, "a second module object of _backplane is made")
t.ok(second.Tensor is not first.Tensor and second.Op is not first.Op,
     "it has its own Tensor and Op types")
t.ok(second.Error is not first.Error
     and second.NotFoundError is not first.NotFoundError
     and issubclass(second.NotFoundError, second.Error),
     "it has its own exception classes")

a = np.arange(4, dtype=np.float32)
b = np.ones(4, dtype=np.float32)
add1, add2 = first.Op("core::add"), second.Op("core::add")
r1, r2 = add1(a, b), add2(a, b)
t.ok(type(r1) is first.Tensor and type(r2) is second.Tensor,
     "each module's op returns its own module's Tensor")
t.ok(np.array_equal(np.from_dlpack(r2), a + b),
     "the second module's op computes a + b")

try:
    second.Op("core::no_such_op")
    raised = None
except Exception as e:  # noqa: BLE001 - the class is what is checked
    raised = e
t.ok(isinstance(raised, second.NotFoundError)
     and not isinstance(raised, first.Error),
     "an error in the second module raises its own class, not the first's",
     repr(raised))
try:
    first.Op("core::no_such_op")
    raised1 = None
except Exception as e:  # noqa: BLE001
    raised1 = e
t.ok(isinstance(raised1, first.NotFoundError)
     and not isinstance(raised1, second.Error),
     "and one in the first module still raises the first's (the second's "
     "initialisation replaced nothing of it)", repr(raised1))

# Routing is per module: the second one's route is called, the first's
# is not.
calls = []


def route(op, args, kwargs):
    calls.append(op)
    return op


second.set_scalar_routing(route, np.ndarray)
mul_s = second.Op("core::mul.Scalar")
mul2 = second.Op("core::mul")
mul2._set_scalar(mul_s)
mul2(a, np.float32(2))  # a NumPy scalar goes through the route
t.ok(len(calls) == 1, "the second module's scalar route is its own",
     f"calls: {calls}")


class MyOp(second.Op):
    pass


r = MyOp("core::add")(a, b)
t.ok(type(r) is second.Tensor and np.array_equal(np.from_dlpack(r), a + b),
     "a subclass of Op made in Python finds its module's state")

# Dropping the second module and everything of it leaves the first whole.
del second, add2, r2, mul_s, mul2, MyOp, r, raised, raised1
for _ in range(3):
    gc.collect()
r = add1(a, b)
t.ok(type(r) is first.Tensor and np.array_equal(np.from_dlpack(r), a + b),
     "after the second module is collected, the first still works")
t.ok(isinstance(bp.ops.core.add(a, b), first.Tensor),
     "and so does the package over it")
sys.stdout.flush()
t.done()
