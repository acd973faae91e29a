/* tests/unit/base/test_rbtree.c - lib/base/rbtree.c against a sorted-array model, with and without augmentation. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "rbtree.h"
#include "util.h"

struct item {
	struct rb_node rb;
	long key, max; /* max: largest key in the subtree (the augmentation under test) */
};

#define item_of(n) container_of(n, struct item, rb)

static bool update_max(struct rb_node *n)
{
	struct item *it = item_of(n);
	long m = it->key;

	if (n->left && item_of(n->left)->max > m)
		m = item_of(n->left)->max;
	if (n->right && item_of(n->right)->max > m)
		m = item_of(n->right)->max;
	if (m == it->max)
		return false;
	it->max = m;
	return true;
}

static void insert(struct rb_root *root, struct item *it, rb_update_fn up)
{
	struct rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = it->key < item_of(parent)->key ? &parent->left : &parent->right;
	}
	rb_link_node(&it->rb, parent, link);
	rb_insert(&it->rb, root, up);
}

static long check_max(const struct rb_node *n)
{
	long m, l, r;

	if (!n)
		return -1;
	l = check_max(n->left);
	r = check_max(n->right);
	m = item_of(n)->key;
	m = l > m ? l : m;
	m = r > m ? r : m;
	cr_assert_eq(item_of(n)->max, m, "augmented max wrong at key %ld", item_of(n)->key);
	return m;
}

static void run_random(rb_update_fn up, unsigned seed)
{
	enum { N = 2000, STEPS = 20000 };
	static struct item items[N];
	static bool in[N];
	struct rb_root root = { NULL };
	size_t live = 0;

	srand(seed);
	for (int i = 0; i < N; i++) {
		items[i].key = rand() % 5000; /* duplicates allowed */
		in[i] = false;
	}
	for (int s = 0; s < STEPS; s++) {
		int i = rand() % N;

		if (in[i]) {
			rb_erase(&items[i].rb, &root, up);
			live--;
		} else {
			insert(&root, &items[i], up);
			live++;
		}
		in[i] = !in[i];
		cr_assert_geq(rb_check(&root), 0, "red-black rules broken at step %d", s);
		if (up && s % 7 == 0)
			check_max(root.node);
	}
	/* In-order walk: sorted and exactly the live items. */
	size_t n = 0;
	long prev = -1;
	for (struct rb_node *x = rb_first(&root); x; x = rb_next(x), n++) {
		cr_assert_geq(item_of(x)->key, prev);
		prev = item_of(x)->key;
	}
	cr_assert_eq(n, live);
}

Test(rbtree, random_plain) { run_random(NULL, 1); }
Test(rbtree, random_augmented) { run_random(update_max, 2); }

Test(rbtree, sequential_then_drain)
{
	enum { N = 4096 };
	static struct item items[N];
	struct rb_root root = { NULL };

	for (int i = 0; i < N; i++) {
		items[i].key = i;
		insert(&root, &items[i], update_max);
	}
	cr_assert_geq(rb_check(&root), 0);
	cr_assert_eq(item_of(root.node)->max, N - 1);
	for (int i = N - 1; i >= 0; i--) {
		rb_erase(&items[i].rb, &root, update_max);
		if (root.node)
			cr_assert_eq(item_of(root.node)->max, i - 1);
	}
	cr_assert_null(root.node);
}
