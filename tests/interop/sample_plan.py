"""The sample a sweep took, rebuilt with numpy from the plan it recorded in
best_VAR.json ("sample"), so tests can compare its bytes with the sweep's
digest: thinned dimensions in runs of adjacent indices, horizontal ones whole
or in tiles of the production chunk's shape, edges padded by replication as
the Zarr writer pads edge chunks."""
import numpy as np


def padded(block, shape):
    """Edge replication up to shape, as the writer pads edge chunks."""
    return np.pad(block, [(0, s - b) for b, s in zip(block.shape, shape)], mode="edge")


def rebuild(data, smp):
    """The sample from the plan: thinned dims in runs, horizontal dims whole or in tiles."""
    dims = smp["dims"]
    thin = [d for d, e in enumerate(dims) if e["kind"] in ("time", "vertical")]
    horiz = [d for d, e in enumerate(dims) if e["kind"] == "horizontal"]
    for d in thin:  # runs along each thinned dimension, padded at the field's edge
        runs = [padded(np.take(data, range(s, min(s + dims[d]["run"], data.shape[d])), axis=d),
                       data.shape[:d] + (dims[d]["run"],) + data.shape[d + 1:]) for s in dims[d]["starts"]]
        data = np.concatenate(runs, axis=d)
    if "tiles" not in smp:
        return data
    grid = [-(-dims[d]["size"] // dims[d]["chunk"]) for d in horiz]
    pieces = []
    for t in smp["tiles"]:
        idx = np.unravel_index(t, grid)
        sl = [slice(None)] * data.ndim
        shape = list(data.shape)
        for d, i in zip(horiz, idx):
            c = dims[d]["chunk"]
            sl[d] = slice(i * c, (i + 1) * c)
            shape[d] = c
        pieces.append(padded(data[tuple(sl)], shape))
    return np.concatenate(pieces, axis=horiz[0])
