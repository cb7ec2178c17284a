/*
 * The end of every unit test's main: run the suite and turn its failures into the exit
 * status meson reads. Header only: each test is one executable.
 */
#ifndef SUTLAB_UNIT_RUN_H
#define SUTLAB_UNIT_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int unit_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
