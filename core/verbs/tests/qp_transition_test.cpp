// SPDX-License-Identifier: GPL-2.0
/*
 * The QP state machine against an independent transcription of IBA 10.3.1's
 * diagram and IBA 11.2.5.2's attribute table (in words, below), and every
 * value range of check_modify() at its boundary.
 */
#include <weft/test.h>
#include <weft/verbs/types.h>

#include "../qp_transition.h"

using namespace weft;
using namespace weft::verbs;
using weft::test::Test;

namespace {

constexpr QpType types[] = {QpType::Smi, QpType::Gsi, QpType::Rc, QpType::Uc, QpType::Ud};
constexpr QpState states[] = {QpState::Reset, QpState::Init, QpState::Rtr, QpState::Rts,
			      QpState::Sqd,   QpState::Sqe,  QpState::Err};

struct Word {
	const char *name;
	uint32_t bits;
};

/* The attribute names used by the transcription. */
constexpr Word attr_words[] = {
	{"sqd_notify", qp_attr::en_sqd_async_notify},
	{"access", qp_attr::access_flags},
	{"pkey", qp_attr::pkey_index},
	{"port", qp_attr::port},
	{"qkey", qp_attr::qkey},
	{"av", qp_attr::av},
	{"mtu", qp_attr::path_mtu},
	{"timeout", qp_attr::timeout},
	{"retry", qp_attr::retry_cnt},
	{"rnr_retry", qp_attr::rnr_retry},
	{"rq_psn", qp_attr::rq_psn},
	{"rd_init", qp_attr::max_qp_rd_atomic},
	{"alt", qp_attr::alt_path},
	{"rnr_timer", qp_attr::min_rnr_timer},
	{"sq_psn", qp_attr::sq_psn},
	{"rd_dest", qp_attr::max_dest_rd_atomic},
	{"mig", qp_attr::path_mig_state},
	{"dqpn", qp_attr::dest_qpn},
	{"cur", qp_attr::cur_state},
};

constexpr Word type_words[] = {
	{"smi", 1u << 0}, {"gsi", 1u << 1}, {"rc", 1u << 2}, {"uc", 1u << 3}, {"ud", 1u << 4},
};

/* The OR of the words' bits; an unknown word yields ~0 so nothing matches. */
template <size_t N> uint32_t parse(const char *s, const Word (&dict)[N])
{
	uint32_t bits = 0;
	while (*s) {
		size_t len = 0;
		while (s[len] && s[len] != ' ')
			len++;
		bool known = false;
		for (const Word &w : dict) {
			if (__builtin_strlen(w.name) == len && !__builtin_memcmp(w.name, s, len)) {
				bits |= w.bits;
				known = true;
			}
		}
		if (len && !known)
			return ~0u;
		s += len;
		while (*s == ' ')
			s++;
	}
	return bits;
}

/*
 * IBA 10.3.1 arrows and their IBA 11.2.5.2 attributes, except "any state ->
 * Reset" and "any state -> Error", which need none.  No SQE for RC.
 */
struct Arrow {
	const char *types;
	QpState cur, next;
	const char *required;
	const char *optional;
};

constexpr Arrow diagram[] = {
	{"smi gsi", QpState::Reset, QpState::Init, "pkey qkey", ""},
	{"ud", QpState::Reset, QpState::Init, "pkey port qkey", ""},
	{"rc uc", QpState::Reset, QpState::Init, "pkey port access", ""},
	{"smi gsi", QpState::Init, QpState::Init, "", "pkey qkey"},
	{"ud", QpState::Init, QpState::Init, "", "pkey port qkey"},
	{"rc uc", QpState::Init, QpState::Init, "", "pkey port access"},
	{"smi gsi ud", QpState::Init, QpState::Rtr, "", "pkey qkey"},
	{"uc", QpState::Init, QpState::Rtr, "av mtu dqpn rq_psn", "alt access pkey"},
	{"rc", QpState::Init, QpState::Rtr, "av mtu dqpn rq_psn rd_dest rnr_timer",
	 "alt access pkey"},
	{"smi gsi ud", QpState::Rtr, QpState::Rts, "sq_psn", "cur qkey"},
	{"uc", QpState::Rtr, QpState::Rts, "sq_psn", "cur alt access mig"},
	{"rc", QpState::Rtr, QpState::Rts, "sq_psn timeout retry rnr_retry rd_init",
	 "cur alt access mig rnr_timer"},
	{"smi gsi ud", QpState::Rts, QpState::Rts, "", "cur qkey"},
	{"uc", QpState::Rts, QpState::Rts, "", "cur alt access mig"},
	{"rc", QpState::Rts, QpState::Rts, "", "cur alt access mig rnr_timer"},
	{"smi gsi rc uc ud", QpState::Rts, QpState::Sqd, "", "sqd_notify"},
	{"smi gsi ud", QpState::Sqd, QpState::Rts, "", "cur qkey"},
	{"uc", QpState::Sqd, QpState::Rts, "", "cur alt access mig"},
	{"rc", QpState::Sqd, QpState::Rts, "", "cur alt access mig rnr_timer"},
	{"smi gsi ud", QpState::Sqd, QpState::Sqd, "", "pkey qkey"},
	{"uc", QpState::Sqd, QpState::Sqd, "", "av alt access pkey mig"},
	{"rc", QpState::Sqd, QpState::Sqd, "",
	 "port av timeout retry rnr_retry rd_init rd_dest alt access pkey rnr_timer mig"},
	{"smi gsi ud", QpState::Sqe, QpState::Rts, "", "cur qkey"},
	{"uc", QpState::Sqe, QpState::Rts, "", "cur access"},
};

struct Expected {
	bool valid;
	uint32_t required, optional;
};

Expected expected(QpType type, QpState cur, QpState next)
{
	if (next == QpState::Reset || next == QpState::Err)
		return {true, 0, 0};
	uint32_t tbit = 1u << static_cast<uint8_t>(type);
	for (const Arrow &a : diagram)
		if (a.cur == cur && a.next == next && (parse(a.types, type_words) & tbit))
			return {true, parse(a.required, attr_words), parse(a.optional, attr_words)};
	return {false, 0, 0};
}

void where(Test &t, QpType type, QpState cur, QpState next, uint32_t mask)
{
	char msg[96];
	format(msg, sizeof(msg), "type %u: %s -> %s, mask 0x%x", static_cast<unsigned>(type),
	       qp_state_str(cur), qp_state_str(next), mask);
	t.note(msg);
}

constexpr DeviceAttr device = [] {
	DeviceAttr d;
	d.max_qp_wr = 1024;
	d.max_send_sge = 8;
	d.max_recv_sge = 4;
	d.max_inline_data = 256;
	d.max_qp_rd_atom = 8;
	d.max_qp_init_rd_atom = 16;
	return d;
}();

ModifyLimits limits()
{
	ModifyLimits lim;
	lim.dev = &device;
	lim.num_ports = 2;
	lim.pkey_tbl_len = 64;
	lim.gid_tbl_len = 16;
	lim.max_mtu = iba::Mtu::M4096;
	return lim;
}

/* Values every check accepts, moving @cur to @next. */
QpAttr good_attr(QpState cur, QpState next)
{
	QpAttr a;
	a.state = next;
	a.cur_state = cur;
	a.path_mtu = iba::Mtu::M1024;
	a.qkey = 0x80010000;
	a.dest_qp_num = 0x42;
	a.qp_access_flags = access::local_write | access::remote_write;
	a.ah_attr.dlid = 0x10;
	a.alt_ah_attr.dlid = 0x11;
	a.port_num = 1;
	a.alt_port_num = 2;
	a.timeout = 14;
	a.alt_timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.min_rnr_timer = 12;
	a.max_rd_atomic = 4;
	a.max_dest_rd_atomic = 4;
	return a;
}

bool modify_ok(QpType type, QpState cur, QpState next, uint32_t mask)
{
	return check_modify(type, cur, good_attr(cur, next), mask, limits()).ok();
}

/* The valid set and the masks equal the transcription, for all 245 triples. */
void diagram_matches(Test &t)
{
	for (QpType type : types) {
		for (QpState cur : states) {
			for (QpState next : states) {
				Expected e = expected(type, cur, next);
				TransitionRule r = transition_rule(type, cur, next);
				bool same = WEFT_EXPECT_EQ(t, r.valid, e.valid) &&
					    WEFT_EXPECT_EQ(t, r.required, e.required) &&
					    WEFT_EXPECT_EQ(t, r.optional, e.optional);
				if (!same)
					where(t, type, cur, next, 0);
			}
		}
	}
}

/* What check_modify() says of one mask on one arrow, against @want. */
void expect_modify(Test &t, QpType type, QpState cur, QpState next, uint32_t mask, bool want)
{
	if (!WEFT_EXPECT_EQ(t, modify_ok(type, cur, next, mask), want))
		where(t, type, cur, next, mask);
}

/* For one valid arrow: the IBA 11.2.5.2 row, bit by bit. */
void check_arrow_masks(Test &t, QpType type, QpState cur, QpState next, const Expected &e)
{
	uint32_t base = e.required | qp_attr::state;
	expect_modify(t, type, cur, next, base, true);
	for (uint32_t bit = 1; bit & qp_attr::all; bit <<= 1) {
		if (bit & e.required)
			expect_modify(t, type, cur, next, base & ~bit, false);
		else if (bit & e.optional)
			expect_modify(t, type, cur, next, base | bit, true);
		else if (bit != qp_attr::state)
			expect_modify(t, type, cur, next, base | bit, false);
	}
	expect_modify(t, type, cur, next, base | e.optional, true);
	/* Without the state bit the target is the current state: the loop's rule. */
	Expected loop = expected(type, cur, cur);
	bool loop_ok = loop.valid && (e.required & loop.required) == loop.required &&
		       !(e.required & ~(loop.required | loop.optional));
	expect_modify(t, type, cur, next, e.required, loop_ok);
}

void modify_masks(Test &t)
{
	for (QpType type : types)
		for (QpState cur : states)
			for (QpState next : states) {
				Expected e = expected(type, cur, next);
				if (e.valid)
					check_arrow_masks(t, type, cur, next, e);
				else
					expect_modify(t, type, cur, next, qp_attr::state, false);
			}
}

/* IBA 10.3.1: Reset and Error are one attribute-free step from anywhere. */
void reset_and_error_from_everywhere(Test &t)
{
	constexpr QpState ends[] = {QpState::Reset, QpState::Err};
	for (QpType type : types) {
		for (QpState cur : states) {
			for (QpState next : ends) {
				TransitionRule r = transition_rule(type, cur, next);
				WEFT_EXPECT_TRUE(t, r.valid);
				WEFT_EXPECT_EQ(t, r.required | r.optional, 0u);
				expect_modify(t, type, cur, next, qp_attr::state, true);
				expect_modify(t, type, cur, next, qp_attr::state | qp_attr::qkey,
					      false);
				expect_modify(t, type, cur, next,
					      qp_attr::state | qp_attr::cur_state, false);
			}
		}
	}
}

Result<void> modify(QpType type, QpState cur, const QpAttr &a, uint32_t mask)
{
	return check_modify(type, cur, a, mask, limits());
}

/* IBA 11.2.5.1 "current QP state", with Linux's rule for where it may appear. */
void cur_state_override(Test &t)
{
	constexpr uint32_t m = qp_attr::state | qp_attr::cur_state;
	QpAttr a = good_attr(QpState::Rts, QpState::Rts);
	WEFT_EXPECT_OK(t, modify(QpType::Ud, QpState::Rts, a, m));
	/* The CI moved an unreliable QP to SQE behind our back: recover from it. */
	a.cur_state = QpState::Sqe;
	WEFT_EXPECT_OK(t, modify(QpType::Ud, QpState::Rts, a, m | qp_attr::qkey));
	WEFT_EXPECT_OK(t, modify(QpType::Uc, QpState::Rts, a, m | qp_attr::access_flags));
	WEFT_EXPECT_OK(t, modify(QpType::Gsi, QpState::Rts, a, m));
	/* Sqe -> Rts for UC allows only access flags, unlike Rts -> Rts. */
	WEFT_EXPECT_ERR(t, modify(QpType::Uc, QpState::Rts, a, m | qp_attr::alt_path), err::EINVAL);
	/* RC has no SQE. */
	WEFT_EXPECT_ERR(t, modify(QpType::Rc, QpState::Rts, a, m), err::EINVAL);
	/* Without the state bit the named SQE is also the target: no such loop. */
	WEFT_EXPECT_ERR(t, modify(QpType::Ud, QpState::Rts, a, qp_attr::cur_state), err::EINVAL);
	/* A recorded SQE cannot be named RTS, nor Init named RTS. */
	a.cur_state = QpState::Rts;
	WEFT_EXPECT_ERR(t, modify(QpType::Ud, QpState::Sqe, a, m), err::EINVAL);
	WEFT_EXPECT_ERR(t, modify(QpType::Ud, QpState::Init, a, m), err::EINVAL);
	/* Named correctly, but the arrow does not allow naming it. */
	a.state = QpState::Sqd;
	WEFT_EXPECT_ERR(t, modify(QpType::Ud, QpState::Rts, a, m), err::EINVAL);
	a = good_attr(QpState::Reset, QpState::Init);
	WEFT_EXPECT_ERR(t, modify(QpType::Gsi, QpState::Reset, a,
				  m | qp_attr::pkey_index | qp_attr::qkey),
			err::EINVAL);
	/* Every arrow into RTS allows it. */
	constexpr QpState into_rts[] = {QpState::Rtr, QpState::Sqd, QpState::Sqe};
	for (QpState from : into_rts) {
		a = good_attr(from, QpState::Rts);
		uint32_t psn = from == QpState::Rtr ? qp_attr::sq_psn : 0;
		WEFT_EXPECT_OK(t, modify(QpType::Ud, from, a, m | psn));
	}
}

/* A field at its last good value passes; one past it fails. */
struct Bound {
	QpType type;
	QpState cur, next;
	uint32_t mask;
	void (*set)(QpAttr &a, uint32_t v);
	uint32_t last_good;
};

constexpr uint32_t rc_init = qp_attr::pkey_index | qp_attr::port | qp_attr::access_flags;
constexpr uint32_t rc_rtr = qp_attr::av | qp_attr::path_mtu | qp_attr::dest_qpn |
			    qp_attr::rq_psn | qp_attr::max_dest_rd_atomic |
			    qp_attr::min_rnr_timer;
constexpr uint32_t rc_rts = qp_attr::sq_psn | qp_attr::timeout | qp_attr::retry_cnt |
			    qp_attr::rnr_retry | qp_attr::max_qp_rd_atomic;

constexpr Bound bounds[] = {
	{QpType::Rc, QpState::Reset, QpState::Init, rc_init,
	 [](QpAttr &a, uint32_t v) { a.port_num = uint8_t(v); }, 2},
	{QpType::Rc, QpState::Reset, QpState::Init, rc_init,
	 [](QpAttr &a, uint32_t v) { a.pkey_index = uint16_t(v); }, 63},
	{QpType::Rc, QpState::Reset, QpState::Init, rc_init,
	 [](QpAttr &a, uint32_t v) { a.qp_access_flags = v; }, access::all},
	{QpType::Rc, QpState::Init, QpState::Rtr, rc_rtr,
	 [](QpAttr &a, uint32_t v) { a.path_mtu = iba::Mtu(v); }, 5},
	{QpType::Rc, QpState::Init, QpState::Rtr, rc_rtr,
	 [](QpAttr &a, uint32_t v) { a.rq_psn = v; }, 0xffffff},
	{QpType::Rc, QpState::Init, QpState::Rtr, rc_rtr,
	 [](QpAttr &a, uint32_t v) { a.dest_qp_num = v; }, 0xffffff},
	{QpType::Rc, QpState::Init, QpState::Rtr, rc_rtr,
	 [](QpAttr &a, uint32_t v) { a.min_rnr_timer = uint8_t(v); }, 31},
	{QpType::Rc, QpState::Init, QpState::Rtr, rc_rtr,
	 [](QpAttr &a, uint32_t v) { a.max_dest_rd_atomic = uint8_t(v); }, 8},
	{QpType::Rc, QpState::Init, QpState::Rtr, rc_rtr,
	 [](QpAttr &a, uint32_t v) { a.ah_attr.sl = uint8_t(v); }, 15},
	{QpType::Uc, QpState::Init, QpState::Rtr, rc_rtr & ~(qp_attr::max_dest_rd_atomic |
							       qp_attr::min_rnr_timer),
	 [](QpAttr &a, uint32_t v) {
		 a.ah_attr.global = true;
		 a.ah_attr.sgid_index = uint8_t(v);
	 },
	 15},
	{QpType::Rc, QpState::Rtr, QpState::Rts, rc_rts,
	 [](QpAttr &a, uint32_t v) { a.sq_psn = v; }, 0xffffff},
	{QpType::Rc, QpState::Rtr, QpState::Rts, rc_rts,
	 [](QpAttr &a, uint32_t v) { a.timeout = uint8_t(v); }, 31},
	{QpType::Rc, QpState::Rtr, QpState::Rts, rc_rts,
	 [](QpAttr &a, uint32_t v) { a.retry_cnt = uint8_t(v); }, 7},
	{QpType::Rc, QpState::Rtr, QpState::Rts, rc_rts,
	 [](QpAttr &a, uint32_t v) { a.rnr_retry = uint8_t(v); }, 7},
	{QpType::Rc, QpState::Rtr, QpState::Rts, rc_rts,
	 [](QpAttr &a, uint32_t v) { a.max_rd_atomic = uint8_t(v); }, 16},
	{QpType::Rc, QpState::Rts, QpState::Rts, qp_attr::alt_path,
	 [](QpAttr &a, uint32_t v) { a.alt_port_num = uint8_t(v); }, 2},
	{QpType::Rc, QpState::Rts, QpState::Rts, qp_attr::alt_path,
	 [](QpAttr &a, uint32_t v) { a.alt_pkey_index = uint16_t(v); }, 63},
	{QpType::Rc, QpState::Rts, QpState::Rts, qp_attr::alt_path,
	 [](QpAttr &a, uint32_t v) { a.alt_timeout = uint8_t(v); }, 31},
	{QpType::Rc, QpState::Rts, QpState::Rts, qp_attr::alt_path,
	 [](QpAttr &a, uint32_t v) { a.alt_ah_attr.sl = uint8_t(v); }, 15},
	{QpType::Uc, QpState::Rts, QpState::Rts, qp_attr::path_mig_state,
	 [](QpAttr &a, uint32_t v) { a.path_mig_state = MigState(v); }, 2},
	{QpType::Rc, QpState::Sqd, QpState::Sqd, qp_attr::port,
	 [](QpAttr &a, uint32_t v) { a.port_num = uint8_t(v); }, 2},
	{QpType::Ud, QpState::Init, QpState::Init, qp_attr::pkey_index,
	 [](QpAttr &a, uint32_t v) { a.pkey_index = uint16_t(v); }, 63},
};

void value_bounds(Test &t)
{
	for (const Bound &b : bounds) {
		QpAttr a = good_attr(b.cur, b.next);
		uint32_t mask = b.mask | qp_attr::state;
		b.set(a, b.last_good);
		if (!WEFT_EXPECT_OK(t, modify(b.type, b.cur, a, mask)))
			where(t, b.type, b.cur, b.next, mask);
		b.set(a, b.last_good + 1);
		if (!WEFT_EXPECT_ERR(t, modify(b.type, b.cur, a, mask), err::EINVAL))
			where(t, b.type, b.cur, b.next, mask);
	}
}

/* The lower ends and the limits that are not a single field's maximum. */
void value_lower_ends(Test &t)
{
	constexpr uint32_t m = qp_attr::state | rc_init;
	QpAttr a = good_attr(QpState::Reset, QpState::Init);
	a.port_num = 0;
	WEFT_EXPECT_ERR(t, modify(QpType::Rc, QpState::Reset, a, m), err::EINVAL);
	a = good_attr(QpState::Rts, QpState::Rts);
	a.alt_port_num = 0;
	WEFT_EXPECT_ERR(t, modify(QpType::Rc, QpState::Rts, a, qp_attr::alt_path), err::EINVAL);

	constexpr uint32_t r = qp_attr::state | rc_rtr;
	a = good_attr(QpState::Init, QpState::Rtr);
	a.path_mtu = iba::Mtu(0);
	WEFT_EXPECT_ERR(t, modify(QpType::Rc, QpState::Init, a, r), err::EINVAL);
	/* IBA 11.2.5.1: the path MTU is bounded by the port's. */
	ModifyLimits lim = limits();
	lim.max_mtu = iba::Mtu::M2048;
	a.path_mtu = iba::Mtu::M2048;
	WEFT_EXPECT_OK(t, check_modify(QpType::Rc, QpState::Init, a, r, lim));
	a.path_mtu = iba::Mtu::M4096;
	WEFT_EXPECT_ERR(t, check_modify(QpType::Rc, QpState::Init, a, r, lim), err::EINVAL);
}

/* A connected QP's peer needs a real LID; a GID index only matters with a GRH. */
void address_vectors(Test &t)
{
	constexpr uint32_t uc_rtr = qp_attr::state | qp_attr::av | qp_attr::path_mtu |
				    qp_attr::dest_qpn | qp_attr::rq_psn;
	constexpr QpType connected[] = {QpType::Rc, QpType::Uc};
	for (QpType type : connected) {
		uint32_t m = type == QpType::Rc ? qp_attr::state | rc_rtr : uc_rtr;
		QpAttr a = good_attr(QpState::Init, QpState::Rtr);
		a.ah_attr.dlid = 1;
		WEFT_EXPECT_OK(t, modify(type, QpState::Init, a, m));
		a.ah_attr.dlid = 0;
		WEFT_EXPECT_ERR(t, modify(type, QpState::Init, a, m), err::EINVAL);
		a = good_attr(QpState::Rts, QpState::Rts);
		a.alt_ah_attr.dlid = 0;
		WEFT_EXPECT_ERR(t, modify(type, QpState::Rts, a, qp_attr::alt_path), err::EINVAL);
	}
	QpAttr a = good_attr(QpState::Init, QpState::Rtr);
	a.ah_attr.sgid_index = 200;
	WEFT_EXPECT_OK(t, modify(QpType::Uc, QpState::Init, a, uc_rtr));
	a = good_attr(QpState::Rts, QpState::Rts);
	a.alt_ah_attr.global = true;
	a.alt_ah_attr.sgid_index = 16;
	WEFT_EXPECT_ERR(t, modify(QpType::Uc, QpState::Rts, a, qp_attr::alt_path), err::EINVAL);
}

/* Q_Keys are opaque (IBA 10.2.4): any value, for UD and the special QPs. */
void qkey_any_value(Test &t)
{
	constexpr uint32_t m = qp_attr::state | qp_attr::pkey_index | qp_attr::qkey;
	constexpr uint32_t qkeys[] = {0, 0x7fffffff, 0x80010000, 0xffffffff};
	for (uint32_t qkey : qkeys) {
		QpAttr a = good_attr(QpState::Reset, QpState::Init);
		a.qkey = qkey;
		WEFT_EXPECT_OK(t, modify(QpType::Ud, QpState::Reset, a, m | qp_attr::port));
		WEFT_EXPECT_OK(t, modify(QpType::Gsi, QpState::Reset, a, m));
	}
}

/* RDMA depths need a device to compare with; unknown mask bits and states fail. */
void malformed_requests(Test &t)
{
	constexpr uint32_t m = qp_attr::state | rc_rts;
	QpAttr a = good_attr(QpState::Rtr, QpState::Rts);
	ModifyLimits lim = limits();
	lim.dev = nullptr;
	WEFT_EXPECT_ERR(t, check_modify(QpType::Rc, QpState::Rtr, a, m, lim), err::EINVAL);
	WEFT_EXPECT_OK(t, check_modify(QpType::Ud, QpState::Rtr, a,
				       qp_attr::state | qp_attr::sq_psn, lim));
	WEFT_EXPECT_ERR(t, modify(QpType::Rc, QpState::Rtr, a, m | (1u << 21)), err::EINVAL);
	a.state = static_cast<QpState>(7);
	WEFT_EXPECT_ERR(t, modify(QpType::Rc, QpState::Rtr, a, m), err::EINVAL);
	WEFT_EXPECT_FALSE(t, transition_rule(static_cast<QpType>(5), QpState::Init,
					      QpState::Err).valid);
}

/* IBA 11.2.4.1: each queue size at the device's limit passes, one past fails. */
void caps(Test &t)
{
	QpCap full = {device.max_qp_wr, device.max_qp_wr, device.max_send_sge,
		      device.max_recv_sge, device.max_inline_data};
	WEFT_EXPECT_OK(t, check_qp_cap(full, device));
	uint32_t QpCap::*fields[] = {&QpCap::max_send_wr, &QpCap::max_recv_wr,
				     &QpCap::max_send_sge, &QpCap::max_recv_sge,
				     &QpCap::max_inline_data};
	for (uint32_t QpCap::*f : fields) {
		QpCap c = full;
		c.*f += 1;
		WEFT_EXPECT_ERR(t, check_qp_cap(c, device), err::EINVAL);
	}
}

} // namespace

WEFT_TEST_SUITE(weft_verbs_qp_transition, WEFT_CASE(diagram_matches), WEFT_CASE(modify_masks),
		WEFT_CASE(reset_and_error_from_everywhere), WEFT_CASE(cur_state_override),
		WEFT_CASE(value_bounds), WEFT_CASE(value_lower_ends), WEFT_CASE(address_vectors),
		WEFT_CASE(qkey_any_value), WEFT_CASE(malformed_requests), WEFT_CASE(caps));
