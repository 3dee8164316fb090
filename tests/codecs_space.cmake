dctk_unit_test(test_space_pin unit/test_space_pin.c)
