/*
 * rbtree.h - an intrusive red-black tree with augmentation hooks.
 *
 * The caller owns the ordering: it descends itself, links the new node with
 * rb_link_node() and then calls rb_insert(), as with the kernel's rbtree.  An
 * augmented tree passes an update callback that recomputes a node's cached
 * value from its children; the tree calls it for every node whose subtree
 * changes (insert path, erase path, both nodes of every rotation), so the
 * cached values are right after every operation.  A plain tree passes NULL.
 */
#ifndef UVM_RBTREE_H
#define UVM_RBTREE_H

#include <stdbool.h>
#include <stdint.h>

struct rb_node {
	uintptr_t parent_color; /* parent pointer | colour in bit 0 (1 = black) */
	union {
		struct {
			struct rb_node *left, *right;
		};
		struct rb_node *child[2]; /* by direction: rebalancing is written once for both sides */
	};
};

struct rb_root {
	struct rb_node *node;
};

/* Recompute n's cached value from n and its children; true if it changed. */
typedef bool (*rb_update_fn)(struct rb_node *n);

static inline struct rb_node *rb_parent(const struct rb_node *n) { return (struct rb_node *)(n->parent_color & ~(uintptr_t)1); }

/* Link n as the leaf child *link of parent (NULL parent: the root). */
static inline void rb_link_node(struct rb_node *n, struct rb_node *parent, struct rb_node **link)
{
	n->parent_color = (uintptr_t)parent; /* red */
	n->left = n->right = 0;
	*link = n;
}

/* Rebalance after rb_link_node(); update (may be NULL) maintains augmentation. */
void rb_insert(struct rb_node *n, struct rb_root *root, rb_update_fn update);
/* Remove n from the tree; update (may be NULL) maintains augmentation. */
void rb_erase(struct rb_node *n, struct rb_root *root, rb_update_fn update);
/* Re-run update from n up to the root, stopping early once a value holds. */
void rb_propagate(struct rb_node *n, rb_update_fn update);

struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *n);

/* Number of black nodes on every root-to-leaf path, or -1 if the tree breaks a red-black rule (test oracle). */
int rb_check(const struct rb_root *root);

#endif
