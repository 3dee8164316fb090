# The memory budget (issue 24): codec working memory against measured peak RSS.
dctk_unit_test(test_codec_memory unit/test_codec_memory.c)
