# Loaded by every Python interop test (PYTHONPATH, see dctk_script_test): the timeouts the
# scripts give their subprocesses are guards against hangs, so they grow with the suite's own
# (make check TIMEOUT_SCALE=N, passed as DCTK_TEST_TIMEOUT_SCALE), as ctest's do.
import os
import subprocess

_scale = float(os.environ.get("DCTK_TEST_TIMEOUT_SCALE") or 1)
if _scale > 1:
    def _scaled(method):
        def call(self, *args, **kwargs):
            if kwargs.get("timeout") is not None:
                kwargs["timeout"] = kwargs["timeout"] * _scale
            return method(self, *args, **kwargs)
        return call

    # subprocess.run, check_output and call pass their timeout to one of these two
    subprocess.Popen.communicate = _scaled(subprocess.Popen.communicate)
    subprocess.Popen.wait = _scaled(subprocess.Popen.wait)
