"""numpy references of the selection metrics that more than one test recomputes."""
import numpy as np


def gradient_rel(x, y):
    """The gradient gate's error: sum |dy - dx| over sum |dx|, neighbour differences along the last two
    axes where the original's difference is finite; 0 when nothing differs."""
    num = den = 0.0
    for ax in (-1, -2):
        dx, dy = np.diff(x.astype(np.float64), axis=ax), np.diff(y.astype(np.float64), axis=ax)
        ok = np.isfinite(dx)
        den += np.abs(dx[ok]).sum()
        num += np.abs(dy[ok] - dx[ok]).sum()
    return num / den if num else 0.0
