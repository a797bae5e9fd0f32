// SPDX-License-Identifier: GPL-2.0
/*
 * weft_kunit: KUnit for C++ test bodies.  C++ cannot build struct kunit_suite
 * (a kernel struct), so test modules describe their suites as plain tables
 * (struct weft_test_suite) and this module turns them into KUnit suites at
 * load, runs them, and reports C++ expectation failures through KUnit's own
 * assertion path so they print like any KUnit failure.
 */
#include <kunit/assert.h>
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "weft/rt/kunit_api.h"

/*
 * Ad-hoc runs of one suite (`insmod weft_kunit.ko only=NAME`): the test
 * modules loaded after run only the suite of that name.  make check never
 * sets it.
 */
static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "run only the suite of this name");

struct weft_kunit_set {
	unsigned int n;
	struct kunit_suite **suites;
};

void weft_kunit_fail(struct kunit *test, const char *file, int line, const char *msg)
{
	const struct kunit_loc loc = { .line = line, .file = file };
	const struct kunit_fail_assert fail = { .assert = {} };

	kunit_do_failed_assertion(test, &loc, KUNIT_EXPECTATION, &fail.assert,
				  kunit_fail_assert_format, "%s", msg);
}
EXPORT_SYMBOL_GPL(weft_kunit_fail);

void weft_kunit_note(struct kunit *test, const char *msg)
{
	kunit_info(test, "%s\n", msg);
}
EXPORT_SYMBOL_GPL(weft_kunit_note);

/*
 * After every case: a case that armed allocation-failure injection and
 * bailed out early must not leave it armed for whoever reuses its task.
 */
static void weft_kunit_case_exit(struct kunit *test)
{
	weft_alloc_fail_disarm();
}

static void weft_kunit_free(struct weft_kunit_set *set)
{
	unsigned int i;

	for (i = 0; i < set->n; i++) {
		if (set->suites[i])
			kfree(set->suites[i]->test_cases);
		kfree(set->suites[i]);
	}
	kfree(set->suites);
	kfree(set);
}

static struct kunit_suite *weft_kunit_make_suite(const struct weft_test_suite *desc)
{
	struct kunit_suite *suite;
	struct kunit_case *cases;
	unsigned int i;

	suite = kzalloc(sizeof(*suite), GFP_KERNEL);
	/* One zeroed entry more: KUnit's case arrays end with an empty case. */
	cases = kcalloc(desc->ncases + 1, sizeof(*cases), GFP_KERNEL);
	if (!suite || !cases) {
		kfree(suite);
		kfree(cases);
		return NULL;
	}
	strscpy((char *)suite->name, desc->name, sizeof(suite->name));
	for (i = 0; i < desc->ncases; i++) {
		cases[i].name = desc->cases[i].name;
		cases[i].run_case = desc->cases[i].run;
	}
	suite->test_cases = cases;
	suite->exit = weft_kunit_case_exit;
	return suite;
}

int weft_kunit_run(const struct weft_test_suite *const *suites, unsigned int n, void **handle)
{
	struct weft_kunit_set *set;
	unsigned int i;

	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	set->suites = kcalloc(n, sizeof(*set->suites), GFP_KERNEL);
	if (!set->suites) {
		kfree(set);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (only && *only && strcmp(only, suites[i]->name))
			continue;
		set->suites[set->n] = weft_kunit_make_suite(suites[i]);
		if (!set->suites[set->n]) {
			weft_kunit_free(set);
			return -ENOMEM;
		}
		set->n++;
	}
	__kunit_test_suites_init(set->suites, set->n);
	*handle = set;
	return 0;
}
EXPORT_SYMBOL_GPL(weft_kunit_run);

void weft_kunit_release(void *handle)
{
	struct weft_kunit_set *set = handle;

	if (!set)
		return;
	__kunit_test_suites_exit(set->suites, set->n);
	weft_kunit_free(set);
}
EXPORT_SYMBOL_GPL(weft_kunit_release);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft: KUnit glue for C++ test suites");
