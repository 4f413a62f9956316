"""The one place that makes finn-plus 1.6.1 importable without torch and AMD tools.

Import this module before anything from ``finn``. Each workaround below is needed
by the light install (tools/bootstrap/python/finn/install.sh) and is harmless where
torch or Vivado exist:

1. torch stub: finn/custom_op/fpgadataflow/layernorm.py imports torch at module
   level, and every HW op import loads it. Only LayerNorm's Python execution would
   use it. The stub defines ``Tensor`` because scipy checks ``torch.Tensor`` once
   torch is in ``sys.modules``; any other attribute raises AttributeError.
2. settings: ``finn.util.settings.get_settings()`` raises unless FINN_BUILD_DIR is
   set (the ``finn`` CLI would set it). Unless the caller names one, it is a directory
   of this process's own in TMPDIR, removed at exit.
3. XSI: ``finn.builder.build_dataflow_steps`` does ``from finn.xsi import SimEngine``,
   which resolves lazily through a compiled Vivado binding. Binding placeholders on
   the module first keeps the import from looking for Vivado; simulation steps
   still fail clearly if they are reached.
4. end of build: ``exit_buildflow`` reads the Vivado version from the last path
   component of XILINX_VIVADO (the directory need not exist).
5. names: qonnx names every tensor a transformation adds by ``random_string()``
   (qonnx 1.0.0, ``ModelWrapper.make_new_valueinfo_name``, Python's ``random`` module,
   seeded from the OS), so a step's model had different bytes on every run. Seeding
   ``random`` makes each step's names a function of its inputs; the names stay unique,
   since qonnx draws again while a name is taken.
7. deferred QoR estimator: ``finn.builder.build_dataflow_steps`` imports FINN+'s empirical
   QoR estimator (``finn.analysis.fpgadataflow.empirical_qor_estimation``, which pulls in
   scikit-learn and scipy.stats) at module level: about 1.2 s of the 2.5 s that importing the
   steps takes, in every step's process. Only ``step_generate_estimate_reports`` uses it, and
   only when FINN_QOR_MODEL_DIR names fitted models; until one of its names is used, it stands
   in as a module whose attributes import the real one on first call or attribute access.
6. locale: FINN+'s partitioner restores LC_CTYPE from ``locale.getlocale()``, which
   fails for C.UTF-8 without an en_US locale installed (finn-plus 1.6.1,
   finn/transformation/fpgadataflow/multifpga/partitioner.py, ``Partitioner.__init__``).
"""

import atexit
import importlib.util
import locale
import os
import random
import shutil
import sys
import tempfile
import types


def _install_torch_stub():
    if "torch" in sys.modules or importlib.util.find_spec("torch") is not None:
        return

    def _missing(name):
        raise AttributeError(f"torch is not installed (light FINN environment): torch.{name}")

    torch = types.ModuleType("torch")
    torch.Tensor = type("Tensor", (), {})
    torch.__getattr__ = _missing
    nn = types.ModuleType("torch.nn")
    nn.__getattr__ = _missing
    functional = types.ModuleType("torch.nn.functional")
    functional.__getattr__ = _missing
    torch.nn = nn
    nn.functional = functional
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": functional})


def _bind_xsi_placeholders():
    if os.environ.get("XILINX_VIVADO_REAL"):
        return
    import finn.xsi as xsi

    def _no_xsi(*_args, **_kwargs):
        raise RuntimeError("RTL simulation needs Vivado XSI, which this environment does not have")

    for name in ("SimEngine", "locate_glbl", "compile_sim_obj", "get_simkernel_so", "load_sim_obj",
                 "reset_rtlsim", "close_rtlsim", "rtlsim_multi_io"):
        setattr(xsi, name, _no_xsi)


# Modules imported at first use instead of at the import of the steps (item 7 above).
DEFERRED_MODULES = ("finn.analysis.fpgadataflow.empirical_qor_estimation",)


class _DeferredName:
    """`module.name`, resolved when called or when one of its attributes is read."""

    def __init__(self, module, name):
        self._module = module
        self._name = name

    def _target(self):
        loaded = sys.modules.get(self._module)
        if loaded is None or getattr(loaded, "__deferred__", False):
            sys.modules.pop(self._module, None)
            loaded = importlib.import_module(self._module)
        return getattr(loaded, self._name)

    def __call__(self, *args, **kwargs):
        return self._target()(*args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self._target(), attr)


def _defer(module):
    if module in sys.modules:
        return
    placeholder = types.ModuleType(module)
    placeholder.__deferred__ = True
    placeholder.__getattr__ = lambda name: _DeferredName(module, name)
    sys.modules[module] = placeholder


def _own_build_dir():
    """A FINN_BUILD_DIR for this process alone, removed when it exits.

    It lies in TMPDIR, which is the action's scratch directory in a build and the test's
    private directory under ``forge test``; FINN+ makes its own temporary directories in it.
    """
    path = tempfile.mkdtemp(prefix="finn_build_")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def setup(build_dir=None):
    """Apply all workarounds; returns FINN_BUILD_DIR."""
    _install_torch_stub()
    for module in DEFERRED_MODULES:
        _defer(module)
    random.seed(0)
    if build_dir is None:
        build_dir = os.environ.get("FINN_BUILD_DIR") or _own_build_dir()
    os.makedirs(build_dir, exist_ok=True)
    os.environ["FINN_BUILD_DIR"] = os.path.abspath(build_dir)
    os.environ.setdefault("XILINX_VIVADO", "/opt/Xilinx/Vivado/2024.2")
    # FINN+'s partitioner saves and restores LC_CTYPE, which fails when Python maps
    # C.UTF-8 to an en_US locale that is not installed; under "C" it round-trips.
    os.environ["LC_ALL"] = "C"
    locale.setlocale(locale.LC_CTYPE, "C")
    _bind_xsi_placeholders()
    return os.environ["FINN_BUILD_DIR"]


def plain(v):
    """A node attribute's value as JSON takes it (lists, str, Python numbers)."""
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "item"):
        return v.item()
    return v


class StagedDir:
    """A new directory beside `dest`, made at once, that takes `dest`'s place when the `with`
    block completes and is removed when it fails: `dest` is never left half written."""

    def __init__(self, dest, prefix):
        self.dest = dest
        parent = os.path.dirname(os.path.abspath(dest)) or "."
        os.makedirs(parent, exist_ok=True)
        self.path = tempfile.mkdtemp(dir=parent, prefix=prefix)

    def __enter__(self):
        return self.path

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                if os.path.exists(self.dest):
                    shutil.rmtree(self.dest)
                os.replace(self.path, self.dest)
        finally:
            if os.path.exists(self.path):
                shutil.rmtree(self.path)
        return False
