# The error-bounded serializers dctk.sz and dctk.ebcc: bounds on real and
# adversarial data, hostile streams, and a sharded store written and read back.
dctk_unit_test(test_errbound unit/test_errbound.c)
