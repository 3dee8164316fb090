/* The codecs the codec_decode fuzz target decodes, shared with the seed
 * maker: every decoder in src/codecs (each compressor, filter, serializer
 * and checksum), with the dtype of the array it was made for. The first
 * input byte picks an entry, the second the chunk shape (FUZZ_SHAPES), the
 * rest is the encoded chunk. */
#ifndef DCTK_FUZZ_CODEC_TABLE_H
#define DCTK_FUZZ_CODEC_TABLE_H

#include <stddef.h>

typedef struct {
    const char *json;
    const char *dtype;
} fuzz_codec;

static const fuzz_codec FUZZ_CODECS[] = {
    {"{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}", "float32"},
    {"{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}", "float64"},
    {"{\"name\":\"bytes\"}", "uint8"},
    {"{\"name\":\"crc32c\"}", "float32"},
    {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}", "float32"},
    {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":1,\"shuffle\":\"bitshuffle\",\"typesize\":4,\"blocksize\":256}}", "float32"},
    {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"noshuffle\",\"typesize\":8,\"blocksize\":0}}", "float64"},
    {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":\"shuffle\",\"typesize\":4,\"blocksize\":0}}", "float32"},
    {"{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4hc\",\"clevel\":6,\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0}}", "float64"},
    {"{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}", "float32"},
    {"{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}}", "float64"},
    {"{\"name\":\"gzip\",\"configuration\":{\"level\":6}}", "float32"},
    {"{\"name\":\"numcodecs.lz4\",\"configuration\":{\"acceleration\":1}}", "float32"},
    {"{\"name\":\"numcodecs.zlib\",\"configuration\":{\"level\":1}}", "float64"},
    {"{\"name\":\"numcodecs.bz2\",\"configuration\":{\"level\":1}}", "float32"},
    {"{\"name\":\"numcodecs.lzma\",\"configuration\":{\"format\":1,\"check\":-1,\"preset\":1,\"filters\":null}}", "float32"},
    {"{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":4}}", "float32"},
    {"{\"name\":\"numcodecs.shuffle\",\"configuration\":{\"elementsize\":8}}", "float64"},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}", "float32"},
    {"{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}}", "int16"},
    {"{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<f4\",\"astype\":\"<f4\"}}", "float32"},
    {"{\"name\":\"numcodecs.delta\",\"configuration\":{\"dtype\":\"<i4\",\"astype\":\"<i2\"}}", "int32"},
    {"{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":7}}", "float32"},
    {"{\"name\":\"numcodecs.bitround\",\"configuration\":{\"keepbits\":20}}", "float64"},
    {"{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":3,\"dtype\":\"<f4\",\"astype\":\"<f4\"}}", "float32"},
    {"{\"name\":\"numcodecs.quantize\",\"configuration\":{\"digits\":7,\"dtype\":\"<f8\",\"astype\":\"<f8\"}}", "float64"},
    {"{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":250,\"scale\":10,\"dtype\":\"<f4\",\"astype\":\"<i2\"}}", "float32"},
    {"{\"name\":\"numcodecs.fixedscaleoffset\",\"configuration\":{\"offset\":0.5,\"scale\":100,\"dtype\":\"<f8\",\"astype\":\"<u1\"}}", "float64"},
    {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"asinh.rs\",\"linear_width\":0.5,\"_version\":\"1.0.0\"}}", "float32"},
    {"{\"name\":\"any-numcodecs.array-array\",\"configuration\":{\"id\":\"fixed-offset-scale.rs\",\"offset\":250,\"scale\":30,\"_version\":\"1.0.0\"}}", "float64"},
    {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":8}}", "float32"},
    {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":3,\"precision\":16}}", "float64"},
    {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":0.01}}", "float32"},
    {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":4,\"tolerance\":-1}}", "float64"},
    {"{\"name\":\"numcodecs.zfpy\",\"configuration\":{\"mode\":2,\"rate\":16}}", "int32"},
    {"{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":0.01,\"predictor\":\"lorenzo\"}}", "float32"},
    {"{\"name\":\"dctk.sz\",\"configuration\":{\"error_bound\":1e-6,\"predictor\":\"interp\"}}", "float64"},
    {"{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":0.01,\"base_rmse\":1.0}}", "float32"},
    {"{\"name\":\"dctk.ebcc\",\"configuration\":{\"error_bound\":1e-9,\"base_rmse\":1.0}}", "float64"},
    {"{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":8,\"mode_spec\":\"auto\",\"delta_spec\":\"auto\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":null,\"equal_pages_up_to\":262144}}", "float32"},
    {"{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":4,\"mode_spec\":\"auto\",\"delta_spec\":\"try_consecutive\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":3,\"equal_pages_up_to\":262144}}", "float64"},
    {"{\"name\":\"numcodecs.pcodec\",\"configuration\":{\"level\":12,\"mode_spec\":\"auto\",\"delta_spec\":\"try_consecutive\",\"paging_spec\":\"equal_pages_up_to\",\"delta_encoding_order\":7,\"equal_pages_up_to\":64}}", "int16"},
};
#define FUZZ_NCODECS (sizeof FUZZ_CODECS / sizeof FUZZ_CODECS[0])

/* Chunk shapes, small so that one input costs little. */
typedef struct {
    int ndim;
    size_t shape[4];
} fuzz_shape;

static const fuzz_shape FUZZ_SHAPES[] = {
    {1, {64}}, {2, {8, 8}}, {3, {3, 5, 7}}, {4, {2, 3, 4, 5}}, {2, {1, 1}}, {2, {16, 33}}, {1, {1000}}, {3, {1, 4, 4}},
};
#define FUZZ_NSHAPES (sizeof FUZZ_SHAPES / sizeof FUZZ_SHAPES[0])

#endif
