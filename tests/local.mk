# cmocka test programs. Each stage adds its programs in its own local.mk:
#   GM_TESTS += tests/test_<name>
#   tests_test_<name>_SOURCES = tests/test_<name>.c
#   tests_test_<name>_CFLAGS = $(GM_TEST_CFLAGS)
#   tests_test_<name>_LDADD = $(GM_TEST_LDADD)
check_LTLIBRARIES += tests/libgmtest.la
tests_libgmtest_la_SOURCES = tests/testutil.c tests/testutil.h
tests_libgmtest_la_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

GM_TEST_LDADD = tests/libgmtest.la libgmcore.la $(CMOCKA_LIBS)
GM_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

GM_TESTS = tests/test_base
tests_test_base_SOURCES = tests/test_base.c
tests_test_base_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_base_LDADD = $(GM_TEST_LDADD)

check_PROGRAMS += $(GM_TESTS)
TESTS += $(GM_TESTS)
