// zarrita's zarr.get returns a strided view (a transpose codec leaves F order):
// the tests compare values in C order, so they gather them with this one helper.
export function toC(chunk) {
  const { data, shape, stride } = chunk;
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new data.constructor(n);
  const idx = new Array(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    let off = 0;
    for (let d = 0; d < shape.length; d++) off += idx[d] * stride[d];
    out[i] = data[off];
    for (let d = shape.length - 1; d >= 0 && ++idx[d] === shape[d]; d--) idx[d] = 0;
  }
  return out;
}
