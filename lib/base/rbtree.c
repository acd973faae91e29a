/*
 * rbtree.c - red-black tree rebalancing with augmentation callbacks.
 *
 * Written from the textbook algorithm (CLRS ch. 13) with parent pointers and
 * NULL leaves.  Augmentation follows the kernel's rule: a rotation changes
 * the subtrees of exactly two nodes, so it recomputes the lower one and then
 * the upper one; an insert or erase changes the subtrees along one path, so
 * the path is recomputed before rebalancing starts.
 */
#include "rbtree.h"

#include <stddef.h>

#define RB_BLACK ((uintptr_t)1)

static inline bool is_red(const struct rb_node *n) { return n && !(n->parent_color & RB_BLACK); }
static inline bool is_black(const struct rb_node *n) { return !is_red(n); }
static inline void set_black(struct rb_node *n) { n->parent_color |= RB_BLACK; }
static inline void set_red(struct rb_node *n) { n->parent_color &= ~RB_BLACK; }
static inline void set_parent(struct rb_node *n, struct rb_node *p) { n->parent_color = (uintptr_t)p | (n->parent_color & RB_BLACK); }
static inline void copy_colour(struct rb_node *dst, const struct rb_node *src)
{
	dst->parent_color = (dst->parent_color & ~RB_BLACK) | (src->parent_color & RB_BLACK);
}

/* Make new take old's place under old's parent. */
static void replace_child(struct rb_root *root, struct rb_node *old, struct rb_node *new)
{
	struct rb_node *p = rb_parent(old);

	if (!p)
		root->node = new;
	else if (p->left == old)
		p->left = new;
	else
		p->right = new;
	if (new)
		set_parent(new, p);
}

/* Rotate x down to side dir (0: left, x's right child rises; 1: right). */
static void rotate(struct rb_root *root, struct rb_node *x, int dir, rb_update_fn update)
{
	struct rb_node *y = x->child[!dir];

	x->child[!dir] = y->child[dir];
	if (y->child[dir])
		set_parent(y->child[dir], x);
	replace_child(root, x, y);
	y->child[dir] = x;
	set_parent(x, y);
	if (update) {
		update(x);
		update(y);
	}
}

void rb_propagate(struct rb_node *n, rb_update_fn update)
{
	for (; n; n = rb_parent(n))
		if (!update(n))
			break;
}

/* Recompute every node from n to the root: after an erase the first nodes may hold stale values that happen to look settled. */
static void propagate_all(struct rb_node *n, rb_update_fn update)
{
	for (; n; n = rb_parent(n))
		update(n);
}

void rb_insert(struct rb_node *z, struct rb_root *root, rb_update_fn update)
{
	struct rb_node *p;

	if (update) {
		update(z);
		rb_propagate(rb_parent(z), update);
	}
	while (is_red(p = rb_parent(z))) {
		struct rb_node *g = rb_parent(p); /* exists: a red node is never the root */
		int dir = p == g->right;
		struct rb_node *u = g->child[!dir];

		if (is_red(u)) {
			set_black(p);
			set_black(u);
			set_red(g);
			z = g;
			continue;
		}
		if (z == p->child[!dir]) {
			z = p;
			rotate(root, z, dir, update);
			p = rb_parent(z);
		}
		set_black(p);
		set_red(g);
		rotate(root, g, !dir, update);
	}
	set_black(root->node);
}

/* Restore the black height after a black node left the path through x (x may be NULL, so its parent is passed). */
static void erase_fixup(struct rb_root *root, struct rb_node *x, struct rb_node *xp, rb_update_fn update)
{
	while (x != root->node && is_black(x)) {
		int dir = x != xp->left;
		struct rb_node *w = xp->child[!dir]; /* the sibling: never NULL while x is short of a black */

		if (is_red(w)) {
			set_black(w);
			set_red(xp);
			rotate(root, xp, dir, update);
			w = xp->child[!dir];
		}
		if (is_black(w->left) && is_black(w->right)) {
			set_red(w);
			x = xp;
			xp = rb_parent(x);
			continue;
		}
		if (is_black(w->child[!dir])) {
			set_black(w->child[dir]);
			set_red(w);
			rotate(root, w, !dir, update);
			w = xp->child[!dir];
		}
		copy_colour(w, xp);
		set_black(xp);
		set_black(w->child[!dir]);
		rotate(root, xp, dir, update);
		x = root->node;
	}
	if (x)
		set_black(x);
}

void rb_erase(struct rb_node *z, struct rb_root *root, rb_update_fn update)
{
	struct rb_node *x, *xp;
	bool removed_black;

	if (!z->left || !z->right) {
		x = z->left ? z->left : z->right;
		xp = rb_parent(z);
		removed_black = is_black(z);
		replace_child(root, z, x);
	} else {
		/* Two children: the successor y takes z's place and colour. */
		struct rb_node *y = z->right;

		while (y->left)
			y = y->left;
		removed_black = is_black(y);
		x = y->right;
		if (rb_parent(y) == z) {
			xp = y;
		} else {
			xp = rb_parent(y);
			replace_child(root, y, x);
			y->right = z->right;
			set_parent(y->right, y);
		}
		replace_child(root, z, y);
		y->left = z->left;
		set_parent(y->left, y);
		copy_colour(y, z);
	}
	if (update)
		propagate_all(xp, update);
	if (removed_black && root->node)
		erase_fixup(root, x, xp, update);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->node;

	if (!n)
		return NULL;
	while (n->left)
		n = n->left;
	return n;
}

struct rb_node *rb_next(const struct rb_node *n)
{
	struct rb_node *p;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct rb_node *)n;
	}
	while ((p = rb_parent(n)) && n == p->right)
		n = p;
	return p;
}

static int check_subtree(const struct rb_node *n, const struct rb_node *parent)
{
	int lh, rh;

	if (!n)
		return 1;
	if (rb_parent(n) != parent)
		return -1;
	if (is_red(n) && (is_red(n->left) || is_red(n->right)))
		return -1;
	lh = check_subtree(n->left, n);
	rh = check_subtree(n->right, n);
	if (lh < 0 || rh < 0 || lh != rh)
		return -1;
	return lh + is_black(n);
}

int rb_check(const struct rb_root *root)
{
	if (is_red(root->node))
		return -1;
	return check_subtree(root->node, NULL);
}
