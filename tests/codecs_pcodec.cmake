# The PCodec serializer (numcodecs.pcodec): our pco encoder and decoder, golden
# streams of a reference pco build (tests/interop/make_golden_pcodec.py), real
# fields, edge data, corrupt streams and a sharded store.
dctk_unit_test(test_pcodec unit/test_pcodec.c)
