// SPDX-License-Identifier: GPL-2.0
/* KUnit: intrusive lists. */
#include <weft/list.h>
#include <weft/test.h>

using namespace weft;
using weft::test::Test;

namespace {

struct Item {
	explicit Item(int v) : value(v) {}
	int value;
	ListNode node;
	ListNode other; /* an object can sit on two lists at once */
};
using ItemList = List<Item, &Item::node>;
using OtherList = List<Item, &Item::other>;

int sum(ItemList &l)
{
	int s = 0;
	for (Item &i : l)
		s = s * 10 + i.value;
	return s;
}

void push_pop_order(Test &t)
{
	Item a(1), b(2), c(3);
	ItemList l;
	WEFT_EXPECT_TRUE(t, l.empty());
	l.push_back(a);
	l.push_back(b);
	l.push_front(c);
	WEFT_EXPECT_EQ(t, l.size(), 3u);
	WEFT_EXPECT_EQ(t, sum(l), 312);
	WEFT_EXPECT_TRUE(t, l.front() == &c);
	WEFT_EXPECT_TRUE(t, l.back() == &b);
	WEFT_EXPECT_TRUE(t, l.pop_front() == &c);
	WEFT_EXPECT_FALSE(t, c.node.linked());
	WEFT_EXPECT_TRUE(t, l.pop_front() == &a);
	WEFT_EXPECT_TRUE(t, l.pop_front() == &b);
	WEFT_EXPECT_TRUE(t, l.pop_front() == nullptr);
	WEFT_EXPECT_TRUE(t, l.empty());
}

void remove_middle_and_relink(Test &t)
{
	Item a(1), b(2), c(3);
	ItemList l;
	l.push_back(a);
	l.push_back(b);
	l.push_back(c);
	l.remove(b);
	WEFT_EXPECT_FALSE(t, b.node.linked());
	WEFT_EXPECT_EQ(t, sum(l), 13);
	l.push_back(b);
	WEFT_EXPECT_EQ(t, sum(l), 132);
	while (l.pop_front()) {
	}
}

void remove_while_iterating(Test &t)
{
	Item items[6] = {Item(1), Item(2), Item(3), Item(4), Item(5), Item(6)};
	ItemList l;
	for (Item &i : items)
		l.push_back(i);
	for (Item &i : l)
		if (i.value % 2 == 0)
			l.remove(i);
	WEFT_EXPECT_EQ(t, sum(l), 135);
	for (Item &i : l)
		l.remove(i);
	WEFT_EXPECT_TRUE(t, l.empty());
}

void two_lists_and_splice(Test &t)
{
	Item a(1), b(2), c(3);
	ItemList l1, l2;
	OtherList o;
	l1.push_back(a);
	l2.push_back(b);
	l2.push_back(c);
	o.push_back(c);
	o.push_back(a);
	l1.splice_back(l2);
	WEFT_EXPECT_TRUE(t, l2.empty());
	WEFT_EXPECT_EQ(t, sum(l1), 123);
	WEFT_EXPECT_EQ(t, o.size(), 2u);
	WEFT_EXPECT_TRUE(t, o.front() == &c);
	while (l1.pop_front()) {
	}
	while (o.pop_front()) {
	}
}

} // namespace

WEFT_TEST_SUITE(weft_rt_list, WEFT_CASE(push_pop_order), WEFT_CASE(remove_middle_and_relink),
		WEFT_CASE(remove_while_iterating), WEFT_CASE(two_lists_and_splice));
