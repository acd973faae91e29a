/*
 * vmap.c - the free-space tree: lowest-address fit, the four clip cases and
 * merge_or_add, as the kernel's mm/vmalloc.c does them.
 *
 * Every free range sits in an rb-tree keyed by va_start whose nodes cache
 * subtree_max_size (the largest range below them), and on an address-sorted
 * list.  The augmentation lets the search skip any subtree too small to help,
 * so the lowest fit costs O(log n); the list gives a merge its two neighbours
 * in O(1).
 */
#include "vmap.h"

#include <errno.h>

#define va_of(node) container_of(node, struct vmap_area, rb)

static inline size_t subtree_max(const struct rb_node *n) { return n ? va_of(n)->subtree_max_size : 0; }

static size_t compute_subtree_max(const struct vmap_area *va)
{
	size_t m = va_size(va), l = subtree_max(va->rb.left), r = subtree_max(va->rb.right);

	if (l > m)
		m = l;
	return r > m ? r : m;
}

/* The augmentation callback: the kernel's RB_DECLARE_CALLBACKS_MAX(subtree_max_size, va_size). */
static bool va_update(struct rb_node *n)
{
	struct vmap_area *va = va_of(n);
	size_t m = compute_subtree_max(va);

	if (va->subtree_max_size == m)
		return false;
	va->subtree_max_size = m;
	return true;
}

void va_tree_init(struct va_tree *t)
{
	t->root.node = NULL;
	list_init(&t->list);
}

size_t va_tree_largest(const struct va_tree *t) { return subtree_max(t->root.node); }

/*
 * Where would va link?  Sets *parent and returns the link, or NULL when va
 * overlaps a range already in the tree (the kernel's find_va_links, which
 * warns and refuses rather than corrupt the tree).
 */
static struct rb_node **find_va_links(const struct va_tree *t, const struct vmap_area *va, struct rb_node **parent)
{
	struct rb_node **link = (struct rb_node **)&t->root.node;

	*parent = NULL;
	while (*link) {
		const struct vmap_area *tmp = va_of(*link);

		*parent = *link;
		if (va->va_end <= tmp->va_start)
			link = &(*link)->left;
		else if (va->va_start >= tmp->va_end)
			link = &(*link)->right;
		else
			return NULL;
	}
	return link;
}

/* The list entry that will follow va once it is linked at (parent, link). */
static struct list_head *next_sibling(struct va_tree *t, struct rb_node *parent, struct rb_node **link)
{
	if (!parent)
		return &t->list;
	if (link == &parent->right)
		return va_of(parent)->list.next;
	return &va_of(parent)->list;
}

static void link_va(struct va_tree *t, struct vmap_area *va, struct rb_node *parent, struct rb_node **link)
{
	struct list_head *next = next_sibling(t, parent, link);

	rb_link_node(&va->rb, parent, link);
	va->subtree_max_size = 0;
	rb_insert(&va->rb, &t->root, va_update);
	list_add_tail(&va->list, next);
}

static void unlink_va(struct va_tree *t, struct vmap_area *va)
{
	rb_erase(&va->rb, &t->root, va_update);
	list_del(&va->list);
}

/* ------------------------------------------------------------ searching */

/* Can [ALIGN(max(va_start, vstart), align), +size) live inside va? (is_within_this_va) */
static bool fits_in(const struct vmap_area *va, size_t size, size_t align, uintptr_t vstart)
{
	uintptr_t start = align_up(va->va_start > vstart ? va->va_start : vstart, align);

	if (start < vstart || start + size < start)
		return false;
	return start + size <= va->va_end;
}

/*
 * find_vmap_lowest_match(): descend towards low addresses while the left
 * subtree is big enough; test each node on the way; when stuck, climb back to
 * the first ancestor whose right subtree is big enough and resume there,
 * moving vstart past that ancestor so the explored left side is never
 * re-entered.  With adjust, subtrees are pruned by size + align - 1, the
 * length that surely holds an aligned fit: a smaller block that happens to be
 * aligned may be passed over, which keeps the search O(log n).
 */
static struct vmap_area *lowest_match(const struct va_tree *t, size_t size, size_t align, uintptr_t vstart, bool adjust)
{
	size_t length = adjust ? size + align - 1 : size;
	struct rb_node *node = t->root.node;

	while (node) {
		struct vmap_area *va = va_of(node);

		if (subtree_max(node->left) >= length && vstart < va->va_start) {
			node = node->left;
			continue;
		}
		if (fits_in(va, size, align, vstart))
			return va;
		if (subtree_max(node->right) >= length) {
			node = node->right;
			continue;
		}
		while ((node = rb_parent(node))) {
			va = va_of(node);
			if (fits_in(va, size, align, vstart))
				return va;
			if (subtree_max(node->right) >= length && vstart <= va->va_start) {
				vstart = va->va_start + 1;
				node = node->right;
				break;
			}
		}
	}
	return NULL;
}

/* The kernel skips the size + align - 1 inflation when it cannot matter or would make an exact-window request fail. */
static bool adjust_search_size(size_t size, size_t align, uintptr_t vstart, uintptr_t vend)
{
	return align > UVM_PAGE_SIZE && vend - vstart != size;
}

struct vmap_area *va_lowest_match(const struct va_tree *t, size_t size, size_t align, uintptr_t vstart)
{
	return lowest_match(t, size, align, vstart, false);
}

struct vmap_area *va_lowest_match_linear(const struct va_tree *t, size_t size, size_t align, uintptr_t vstart)
{
	struct vmap_area *va;

	list_for_each_entry(va, &t->list, list)
		if (fits_in(va, size, align, vstart))
			return va;
	return NULL;
}

/*
 * The largest part of a free range inside [lo, hi), in O(log n): the
 * ranges are disjoint and sorted, so only the first and the last range that
 * meet [lo, hi) can be cut, and every subtree between them lies wholly
 * inside, where subtree_max_size answers at once.  Two walks down: the
 * ranges below a meeting node are bounded by lo only, those above by hi.
 */
static size_t clip(const struct vmap_area *va, uintptr_t lo, uintptr_t hi)
{
	uintptr_t s = va->va_start > lo ? va->va_start : lo, e = va->va_end < hi ? va->va_end : hi;

	return e > s ? e - s : 0;
}

static size_t max3(size_t a, size_t b, size_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

static size_t largest_from(const struct rb_node *n, uintptr_t lo)
{
	size_t best = 0;

	while (n) {
		const struct vmap_area *va = va_of(n);

		if (va->va_end <= lo) { /* it and its left lie below lo */
			n = n->right;
			continue;
		}
		best = max3(best, clip(va, lo, UINTPTR_MAX), subtree_max(n->right));
		n = n->left;
	}
	return best;
}

static size_t largest_to(const struct rb_node *n, uintptr_t hi)
{
	size_t best = 0;

	while (n) {
		const struct vmap_area *va = va_of(n);

		if (va->va_start >= hi) { /* it and its right lie at or above hi */
			n = n->left;
			continue;
		}
		best = max3(best, clip(va, 0, hi), subtree_max(n->left));
		n = n->right;
	}
	return best;
}

size_t va_tree_largest_in(const struct va_tree *t, uintptr_t lo, uintptr_t hi)
{
	const struct rb_node *n = t->root.node;

	while (n) {
		const struct vmap_area *va = va_of(n);

		if (va->va_end <= lo)
			n = n->right;
		else if (va->va_start >= hi)
			n = n->left;
		else
			return max3(clip(va, lo, hi), largest_from(n->left, lo), largest_to(n->right, hi));
	}
	return 0;
}

struct vmap_area *va_containing(const struct rb_root *root, uintptr_t addr)
{
	const struct rb_node *n = root->node;

	while (n) {
		struct vmap_area *va = va_of(n);

		if (addr < va->va_start)
			n = n->left;
		else if (addr >= va->va_end)
			n = n->right;
		else
			return va;
	}
	return NULL;
}

struct vmap_area *va_find_free_at(const struct va_tree *t, uintptr_t addr)
{
	const struct rb_node *n = t->root.node;

	while (n) {
		struct vmap_area *va = va_of(n);

		if (addr < va->va_start)
			n = n->left;
		else if (addr > va->va_start)
			n = n->right;
		else
			return va;
	}
	return NULL;
}

/* -------------------------------------------------------------- clipping */

enum fit_type { NOTHING_FIT, FL_FIT_TYPE, LE_FIT_TYPE, RE_FIT_TYPE, NE_FIT_TYPE };

static enum fit_type classify_fit(const struct vmap_area *va, uintptr_t start, size_t size)
{
	if (start < va->va_start || start + size > va->va_end || start + size < start)
		return NOTHING_FIT;
	if (va->va_start == start)
		return va->va_end == start + size ? FL_FIT_TYPE : LE_FIT_TYPE;
	if (va->va_end == start + size)
		return RE_FIT_TYPE;
	return NE_FIT_TYPE;
}

/*
 * va_clip(): take [start, start + size) out of the free range va.
 *
 *   FL  |<------- va ------->|     whole range used: va leaves the tree
 *       |<----- request ---->|
 *
 *   LE  |<------- va ------->|     va_start moves up
 *       |<- request ->|
 *
 *   RE  |<------- va ------->|     va_end moves down
 *              |<- request ->|
 *
 *   NE  |<------- va ------->|     the left rest becomes a new VA (the spare),
 *          |<- request ->|         va keeps the right rest
 */
int va_clip(struct va_tree *t, struct vmap_area *va, uintptr_t start, size_t size, struct vmap_area **spare,
	    struct list_head *absorbed)
{
	struct vmap_area *lva;
	struct rb_node *parent, **link;

	switch (classify_fit(va, start, size)) {
	case NOTHING_FIT:
		return EINVAL;
	case FL_FIT_TYPE:
		unlink_va(t, va);
		list_add_tail(&va->list, absorbed);
		return 0;
	case LE_FIT_TYPE:
		va->va_start += size;
		break;
	case RE_FIT_TYPE:
		va->va_end = start;
		break;
	case NE_FIT_TYPE:
		if (!*spare)
			return ENOMEM;
		lva = *spare;
		*spare = NULL;
		lva->va_start = va->va_start;
		lva->va_end = start;
		va->va_start = start + size;
		rb_propagate(&va->rb, va_update);
		link = find_va_links(t, lva, &parent);
		link_va(t, lva, parent, link);
		return 0;
	}
	rb_propagate(&va->rb, va_update);
	return 0;
}

int va_alloc(struct va_tree *t, size_t size, size_t align, uintptr_t vstart, uintptr_t vend, struct vmap_area **spare,
	     struct list_head *absorbed, uintptr_t *addr)
{
	struct vmap_area *va = lowest_match(t, size, align, vstart, adjust_search_size(size, align, vstart, vend));
	uintptr_t start;
	int err;

	if (!va)
		return ENOMEM;
	start = align_up(va->va_start > vstart ? va->va_start : vstart, align);
	if (start + size > vend || start + size < start)
		return ENOMEM;
	err = va_clip(t, va, start, size, spare, absorbed);
	if (!err)
		*addr = start;
	return err;
}

/* --------------------------------------------------------------- merging */

/*
 * merge_or_add_vmap_area():
 *
 *   |<- prev ->|<- va ->|<- next ->|   next grows down over va, then prev
 *                                      grows up over next, which leaves
 *
 * The merged-away object must leave the tree before prev grows, so that no
 * rotation sees the two overlapping (the kernel orders it the same way).
 */
int va_merge_or_add(struct va_tree *t, struct vmap_area *va, struct list_head *absorbed)
{
	struct rb_node *parent, **link = find_va_links(t, va, &parent);
	struct list_head *next;
	bool merged = false;

	if (!link)
		return EEXIST;
	next = next_sibling(t, parent, link);
	if (next != &t->list) {
		struct vmap_area *sib = list_entry(next, struct vmap_area, list);

		if (sib->va_start == va->va_end) {
			sib->va_start = va->va_start;
			list_add_tail(&va->list, absorbed);
			va = sib;
			merged = true;
		}
	}
	if (next->prev != &t->list) {
		struct vmap_area *sib = list_entry(next->prev, struct vmap_area, list);

		if (sib->va_end == va->va_start) {
			if (merged)
				unlink_va(t, va);
			sib->va_end = va->va_end;
			list_add_tail(&va->list, absorbed);
			va = sib;
			merged = true;
		}
	}
	if (merged)
		rb_propagate(&va->rb, va_update);
	else
		link_va(t, va, parent, link);
	return 0;
}

/* ---------------------------------------------------------------- checks */

static int check_augment(const struct rb_node *n)
{
	if (!n)
		return 0;
	if (check_augment(n->left) || check_augment(n->right))
		return -1;
	return va_of(n)->subtree_max_size == compute_subtree_max(va_of(n)) ? 0 : -1;
}

int va_tree_check(const struct va_tree *t)
{
	const struct vmap_area *va, *prev = NULL;
	const struct rb_node *n = rb_first(&t->root);

	if (rb_check(&t->root) < 0 || check_augment(t->root.node))
		return -1;
	list_for_each_entry(va, &t->list, list) {
		if (&va->rb != n || va->va_start >= va->va_end)
			return -1;
		if (prev && prev->va_end >= va->va_start)
			return -1; /* overlapping, or touching and not merged */
		prev = va;
		n = rb_next(n);
	}
	return n ? -1 : 0;
}
