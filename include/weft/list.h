/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Intrusive doubly linked lists.  An object lives on a list through a
 * ListNode member, so insertion never allocates and removal is O(1).  A node
 * knows whether it is linked: linking a linked node or unlinking an unlinked
 * one is a bug and WARNs instead of corrupting the list.  Lists do not own
 * their elements and do no locking: the owner of the list does both.
 */
#ifndef WEFT_LIST_H
#define WEFT_LIST_H

#include <weft/rt/kapi.h>
#include <weft/util.h>

namespace weft {

class ListNode {
public:
	ListNode() = default;
	WEFT_NOCOPY(ListNode);
	~ListNode()
	{
		if (WEFT_UNLIKELY(linked()))
			weft_warn(__FILE__, __LINE__, "list node destroyed while linked");
	}
	bool linked() const { return next_ != nullptr; }

private:
	template <typename T, ListNode T::*> friend class List;
	friend class ListHead;
	ListNode *next_ = nullptr;
	ListNode *prev_ = nullptr;
};

template <typename T, ListNode T::*Node> class List {
public:
	List() { head_.next_ = head_.prev_ = &head_; }
	WEFT_NOCOPY(List);
	~List()
	{
		if (WEFT_UNLIKELY(!empty()))
			weft_warn(__FILE__, __LINE__, "list destroyed while not empty");
		head_.next_ = head_.prev_ = nullptr;
	}

	bool empty() const { return head_.next_ == &head_; }
	bool holds(const ListNode *n) const
	{
		for (const ListNode *p = head_.next_; p != &head_; p = p->next_)
			if (p == n)
				return true;
		return false;
	}
	size_t size() const
	{
		size_t n = 0;
		for (const ListNode *p = head_.next_; p != &head_; p = p->next_)
			n++;
		return n;
	}

	void push_back(T &obj) { insert_between(node(obj), head_.prev_, &head_); }
	void push_front(T &obj) { insert_between(node(obj), &head_, head_.next_); }

	/* Unlink @obj; it must be on this list. */
	void remove(T &obj)
	{
		ListNode *n = node(obj);
		if (WEFT_UNLIKELY(!n->linked())) {
			weft_warn(__FILE__, __LINE__, "removing an unlinked list node");
			return;
		}
#ifdef WEFT_LIST_CHECK_OWNER
		/* Host fuzzing: unlinking another list's node (under the wrong lock) is a finding. */
		if (WEFT_UNLIKELY(!holds(n))) {
			weft_warn(__FILE__, __LINE__, "removing a node of another list");
			return;
		}
#endif
		n->prev_->next_ = n->next_;
		n->next_->prev_ = n->prev_;
		n->next_ = n->prev_ = nullptr;
	}

	T *front() const { return empty() ? nullptr : owner(head_.next_); }
	T *back() const { return empty() ? nullptr : owner(head_.prev_); }
	/* The element before @obj (which is on this list), or nullptr at the front. */
	T *prev(T &obj) const
	{
		ListNode *p = node(obj)->prev_;
		return p == &head_ ? nullptr : owner(p);
	}
	T *pop_front()
	{
		T *obj = front();
		if (obj)
			remove(*obj);
		return obj;
	}

	/*
	 * Iteration.  The iterator reads the next node before yielding the
	 * current one, so the current element may be removed in the loop body.
	 */
	class Iter {
	public:
		Iter(ListNode *cur, const ListNode *head) : cur_(cur), head_(head)
		{
			next_ = cur_ == head_ ? cur_ : cur_->next_;
		}
		T &operator*() const { return *owner(cur_); }
		Iter &operator++()
		{
			cur_ = next_;
			next_ = cur_ == head_ ? cur_ : cur_->next_;
			return *this;
		}
		bool operator!=(const Iter &o) const { return cur_ != o.cur_; }

	private:
		ListNode *cur_;
		ListNode *next_;
		const ListNode *head_;
	};
	Iter begin() { return Iter(head_.next_, &head_); }
	Iter end() { return Iter(&head_, &head_); }

	/* Move every element of @other to the end of this list. */
	void splice_back(List &other)
	{
		while (T *obj = other.pop_front())
			push_back(*obj);
	}

private:
	static ListNode *node(T &obj) { return &(obj.*Node); }
	static T *owner(ListNode *n) { return container_of(n, Node); }

	static void insert_between(ListNode *n, ListNode *prev, ListNode *next)
	{
		if (WEFT_UNLIKELY(n->linked())) {
			weft_warn(__FILE__, __LINE__, "adding a list node that is already linked");
			return;
		}
		n->next_ = next;
		n->prev_ = prev;
		prev->next_ = n;
		next->prev_ = n;
	}

	ListNode head_;
};

} // namespace weft

#endif
