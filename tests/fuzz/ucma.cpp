// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: two rdma_cm files (userspace/ucma/) as librdmacm drives
 * them, over a stand-in RDMA CM (below) that keeps the contract of
 * include/weft/rdma_cm/rdma_cm.h: handlers one at a time, never after
 * destroy(), a ConnectRequest's new Id with its listener's handler, a
 * non-zero return destroying the Id; some events come inline, from inside
 * the command that causes them.  The input is records (fuzz.h), each an
 * operation byte and its argument:
 *   0 a write() to file A or B: the argument is the command (header and
 *     request); on request the Id and group numbers it names are replaced
 *     by ones seen, its addresses by valid AF_INET/AF_INET6/AF_IB ones,
 *     its response and option pointers by user memory (or not);
 *   1 an event from the RDMA CM to one of its Ids (type, status, private
 *     data from the argument; ConnectRequest to a listener);
 *   2 time passing (device-removal work runs);
 *   3 file B closed (kill -9) and opened again.
 * At the end both files are closed: no Id, event or group left (ucma's
 * weft_stats and the stand-in's count), nothing leaked (LeakSanitizer).
 */
#include "fuzz.h"

#include "../../userspace/ucma/commands.h"
#include "../../userspace/ucma/translate.h"

using namespace weft;

/* --- the stand-in RDMA CM --------------------------------------------------- */

namespace weft::rdma_cm {

struct Net {
	int refs;
};

class Id {
public:
	Handler *h = nullptr;
	void *ctx = nullptr;
	Info info{};
	bool listening = false, destroyed = false;
	uint32_t index;
	ListNode node;
	void *mc[4] = {};
};

} // namespace weft::rdma_cm

namespace {

using namespace weft::rdma_cm;

constexpr int max_ids = 64;
Id *ids[max_ids];	      /* live Ids by index */
Id *in_handler = nullptr;     /* the Id whose handler runs */
uint8_t device_token;	      /* the one device, never dereferenced */
Net the_net{1};
uint8_t inline_events;	      /* set by the driver: deliver some events from inside commands */
int live_ids;

verbs::Device *device() { return reinterpret_cast<verbs::Device *>(&device_token); }

void deliver(Id &id, Event &e);

Id *new_id()
{
	for (int i = 0; i < max_ids; i++) {
		if (ids[i])
			continue;
		auto *id = new (Gfp::Sleep) Id;
		if (!id)
			return nullptr;
		id->index = uint32_t(i);
		ids[i] = id;
		live_ids++;
		return id;
	}
	return nullptr;
}

void drop(Id *id)
{
	fuzz::check(!id->destroyed && ids[id->index] == id, "destroy of a live Id");
	fuzz::check(id != in_handler, "destroy() from its own handler");
	ids[id->index] = nullptr;
	live_ids--;
	delete id;
}

/* One handler call, and what its return value asks. */
void deliver(Id &id, Event &e)
{
	fuzz::check(in_handler == nullptr, "handlers one at a time");
	e.id = &id;
	in_handler = &id;
	const int r = id.h->event(e);
	in_handler = nullptr;
	if (r)
		drop(&id);
}

void inline_event(Id &id, EventType t)
{
	if (!(inline_events & 1))
		return;
	Event e{t};
	deliver(id, e);
}

Result<void> need_dev(Id &id)
{
	return id.info.dev ? ok() : Result<void>(Error(err::EINVAL));
}

} // namespace

namespace weft::rdma_cm {

Net *current_net()
{
	the_net.refs++;
	return &the_net;
}
void put_net(Net *n)
{
	fuzz::check(n == &the_net && n->refs > 1, "net reference");
	n->refs--;
}

Result<Id *> create_id(Net *net, PortSpace ps, verbs::QpType type, Handler &h, void *context)
{
	fuzz::check(net == &the_net, "create_id in the caller's net");
	Id *id = new_id();
	if (!id)
		return Error(err::ENOMEM);
	id->h = &h;
	id->ctx = context;
	id->info.ps = ps;
	id->info.qp_type = type;
	return id;
}

void destroy(Id *id)
{
	drop(id);
}

void set_handler(Id &id, Handler &h, void *context)
{
	id.h = &h;
	id.ctx = context;
}

Result<void> bind(Id &id, const SockAddr &a)
{
	fuzz::check(a.family == af_inet || a.family == af_inet6, "bind to an IP address");
	id.info.src = a;
	if (!a.any())
		id.info.dev = device();
	return ok();
}

Result<void> resolve_addr(Id &id, const SockAddr *src, const SockAddr &dst, uint32_t)
{
	if (src)
		id.info.src = *src;
	id.info.dst = dst;
	id.info.dev = device();
	id.info.port = 1;
	id.info.pkey = 0xffff;
	id.info.sgid.raw[15] = 1;
	id.info.dgid.raw[15] = 2;
	inline_event(id, EventType::AddrResolved);
	return ok();
}

Result<void> resolve_route(Id &id, uint32_t)
{
	WEFT_TRY(need_dev(id));
	id.info.has_route = true;
	id.info.route.dlid.set(2);
	id.info.route.slid.set(1);
	inline_event(id, EventType::RouteResolved);
	return ok();
}

Result<void> listen(Id &id, int backlog)
{
	fuzz::check(backlog > 0 && backlog <= 1024, "backlog within bounds");
	id.listening = true;
	return ok();
}

Result<void> init_qp_attr(Id &id, verbs::QpState state, verbs::QpAttr &attr, uint32_t &mask)
{
	WEFT_TRY(need_dev(id));
	if (state == verbs::QpState::Reset || state > verbs::QpState::Rts)
		return Error(err::EINVAL);
	attr.state = state;
	attr.port_num = 1;
	attr.ah_attr.dlid = 2;
	mask = verbs::qp_attr::state | verbs::qp_attr::port;
	return ok();
}

Result<void> connect(Id &id, const ConnParam &p)
{
	WEFT_TRY(need_dev(id));
	fuzz::check(p.private_data.size() <= 255 && p.qp_num <= 0xffffff, "connect parameters");
	return ok();
}

Result<void> accept(Id &id, const ConnParam &p)
{
	WEFT_TRY(need_dev(id));
	fuzz::check(p.private_data.size() <= 255, "accept parameters");
	inline_event(id, EventType::Established);
	return ok();
}

Result<void> reject(Id &id, ConstBytes pd, uint16_t reason)
{
	fuzz::check(pd.size() <= 255, "reject private data");
	fuzz::check(reason == iba::cm::rej::consumer || reason == iba::cm::rej::vendor_option_unsupported,
		    "reject reason");
	return need_dev(id);
}

Result<void> establish(Id &id)
{
	return need_dev(id);
}

Result<void> notify_established(Id &id)
{
	return need_dev(id);
}

Result<void> disconnect(Id &id)
{
	WEFT_TRY(need_dev(id));
	inline_event(id, EventType::Disconnected);
	return ok();
}

Result<void> join_multicast(Id &id, const SockAddr &, uint8_t state, void *mc_context)
{
	fuzz::check(state == 1 || state == 8, "join state");
	for (void *&m : id.mc) {
		if (!m) {
			m = mc_context;
			return ok();
		}
	}
	return Error(err::ENOMEM);
}

Result<void> leave_multicast(Id &id, const SockAddr &)
{
	/* The group is found by address in-tree; here any one goes (events are by context). */
	(void)id;
	return ok();
}

Result<void> set_tos(Id &, uint8_t) { return ok(); }
Result<void> set_reuseaddr(Id &, bool) { return ok(); }
Result<void> set_afonly(Id &, bool) { return ok(); }
Result<void> set_ack_timeout(Id &, uint8_t) { return ok(); }

Info info(const Id &id)
{
	return id.info;
}

bool SockAddr::any() const
{
	for (size_t i = 0; i < ip_len(); i++)
		if (ip[i])
			return false;
	return true;
}

} // namespace weft::rdma_cm

namespace weft::ucma {

uint64_t node_guid(const verbs::Device &dev)
{
	fuzz::check(&dev == device(), "the Id's device");
	return 0x0002c90300001234ull;
}

} // namespace weft::ucma

/* --- ucma_kapi.h for a host process ------------------------------------------ */

namespace {

/* User memory: every user pointer ucma follows must land in here (else EFAULT). */
alignas(8) uint8_t umem[1 << 14];

bool in_umem(const void *p, size_t len)
{
	const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(umem);
	return a >= b && len <= sizeof(umem) && a - b <= sizeof(umem) - len;
}

ucma::File *files[2];
weft_ucma_waiter *waiters[2] = {reinterpret_cast<weft_ucma_waiter *>(&files[0]),
				reinterpret_cast<weft_ucma_waiter *>(&files[1])};

} // namespace

extern "C" {

void weft_ucma_wake(struct weft_ucma_waiter *) {}

/* One thread: nothing can arrive while GET_EVENT sleeps, so a signal ends it. */
int weft_ucma_wait(struct weft_ucma_waiter *, bool (*ready)(void *arg), void *arg)
{
	fuzz::check(!ready(arg), "GET_EVENT sleeps only on an empty queue");
	return -err::ERESTARTSYS;
}

void *weft_ucma_fd_get(int fd, void **hold, int *e)
{
	*hold = nullptr;
	if (fd == 3 || fd == 4) {
		if (files[fd - 3])
			return files[fd - 3];
	} else if (fd == 5) {
		*e = -err::EINVAL; /* a descriptor of another kind */
		return nullptr;
	}
	*e = -err::ENOENT;
	return nullptr;
}

void weft_ucma_fd_put(void *) {}

int weft_ucma_copy_from_user(void *dst, const void *src, size_t len)
{
	if (!in_umem(src, len))
		return -err::EFAULT;
	__builtin_memcpy(dst, src, len);
	return 0;
}

int weft_ucma_copy_to_user(void *dst, const void *src, size_t len)
{
	if (!in_umem(dst, len))
		return -err::EFAULT;
	__builtin_memcpy(dst, src, len);
	return 0;
}

} // extern "C"

/* --- the driver ------------------------------------------------------------------ */

namespace {

namespace cmd = ucma::abi::cmd;

/* Where a command's request names an Id, a response, a pointer, addresses (-1: none). */
struct Layout {
	int id, response, ptr;
	int addr[2], size[2]; /* a sockaddr, and its u16 size field (or -1: a sockaddr_in6 slot) */
};

constexpr Layout layout(uint32_t c)
{
	switch (c) {
	case cmd::create_id: return {-1, 8, -1, {-1, -1}, {-1, -1}};
	case cmd::destroy_id: return {8, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::bind_ip: return {36, 0, -1, {8, -1}, {-1, -1}};
	case cmd::resolve_ip: return {56, -1, -1, {0, 28}, {-1, -1}};
	case cmd::query_route: return {8, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::connect: return {272, -1, -1, {-1, -1}, {-1, -1}};
	case cmd::accept: return {280, -1, -1, {-1, -1}, {-1, -1}};
	case cmd::init_qp_attr: return {8, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::get_event: return {-1, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::set_option: return {8, -1, 0, {-1, -1}, {-1, -1}};
	case cmd::join_ip_mcast: return {44, 0, -1, {16, -1}, {-1, -1}};
	case cmd::leave_mcast: return {8, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::migrate_id: return {8, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::query: return {8, 0, -1, {-1, -1}, {-1, -1}};
	case cmd::bind: return {0, -1, -1, {8, -1}, {4, -1}};
	case cmd::resolve_addr: return {0, -1, -1, {16, 144}, {8, 10}};
	case cmd::join_mcast: return {16, 0, -1, {24, -1}, {20, -1}};
	case cmd::resolve_route:
	case cmd::listen:
	case cmd::reject:
	case cmd::disconnect:
	case cmd::notify: return {0, -1, -1, {-1, -1}, {-1, -1}};
	default: return {-1, -1, -1, {-1, -1}, {-1, -1}};
	}
}

/* Numbers the files handed out (Ids and groups), for requests to name. */
uint32_t seen[32];
unsigned nseen;

void remember(uint32_t n)
{
	seen[nseen++ % 32] = n;
}

template <typename T> void put(uint8_t *p, T v)
{
	__builtin_memcpy(p, &v, sizeof(v));
}

/* Request in umem[0..], response room at umem[8192..]. */
constexpr size_t resp_off = 8192;

void fix_addr(uint8_t *body, size_t n, int off, int size_off, uint8_t sel)
{
	static const uint16_t fam[] = {WEFT_UCMA_AF_INET, WEFT_UCMA_AF_INET6, WEFT_UCMA_AF_IB, 0};
	const uint16_t f = fam[sel & 3];
	if (off < 0 || size_t(off) + 2 > n)
		return;
	put(body + off, f);
	if (size_off >= 0 && size_t(size_off) + 2 <= n)
		put(body + size_off, uint16_t(ucma::addr_size(f)));
}

void command(fuzz::Records &in, ConstBytes rec)
{
	ucma::File *f = files[in.byte() & 1];
	if (!f || rec.size() < 8)
		return;
	uint8_t *buf = umem;
	const size_t n = min(rec.size(), size_t(resp_off));
	__builtin_memcpy(buf, rec.data(), n);
	ucma::abi::CmdHdr hdr;
	__builtin_memcpy(&hdr, buf, sizeof(hdr));
	hdr.cmd %= 25; /* 23 and 24: unknown */
	const uint8_t fix = in.byte();
	if (fix & 1) { /* a request that adds up: the header's sizes are the truth */
		hdr.in = uint16_t(n - sizeof(hdr));
		hdr.out = uint16_t(fix & 2 ? 512 : in.byte());
	}
	__builtin_memcpy(buf, &hdr, sizeof(hdr));
	uint8_t *body = buf + sizeof(hdr);
	const size_t blen = n - sizeof(hdr);
	const Layout l = layout(hdr.cmd);
	if ((fix & 4) && l.id >= 0 && size_t(l.id) + 4 <= blen && nseen)
		put(body + l.id, seen[in.byte() % min(nseen, 32u)]);
	if ((fix & 8) && l.response >= 0 && size_t(l.response) + 8 <= blen)
		put(body + l.response, uint64_t(reinterpret_cast<uintptr_t>(umem + resp_off +
									  (fix & 16 ? 8100 : 0))));
	if ((fix & 8) && l.ptr >= 0 && size_t(l.ptr) + 8 <= blen)
		put(body + l.ptr, uint64_t(reinterpret_cast<uintptr_t>(umem + resp_off)));
	if (fix & 32)
		for (int i = 0; i < 2; i++)
			fix_addr(body, blen, l.addr[i], l.size[i], in.byte());
	if (hdr.cmd == cmd::migrate_id && blen >= 16 && (fix & 64))
		put(body + 12, uint32_t(3 + (in.byte() % 3)));
	__builtin_memset(umem + resp_off, 0, sizeof(umem) - resp_off);
	auto r = f->write(buf, n, in.byte() & 1);
	if (!r)
		return;
	fuzz::check(r.value() == n, "a command takes the whole write");
	uint32_t got;
	__builtin_memcpy(&got, umem + resp_off + (fix & 16 ? 8100 : 0) +
				       (hdr.cmd == cmd::get_event ? 8 : 0), sizeof(got));
	if (hdr.cmd == cmd::create_id || hdr.cmd == cmd::get_event ||
	    hdr.cmd == cmd::join_ip_mcast || hdr.cmd == cmd::join_mcast)
		remember(got);
}

void event(fuzz::Records &in, ConstBytes rec)
{
	Id *id = ids[in.byte() % max_ids];
	if (!id)
		return;
	Event e{static_cast<EventType>(in.byte() % 16)};
	e.status = int8_t(in.byte());
	const size_t pd = min(rec.size(), size_t(300)); /* the RDMA CM never hands more than 255 */
	e.conn.private_data = ConstBytes(rec.data(), min(pd, size_t(255)));
	e.ud.private_data = e.conn.private_data;
	e.mc_context = id->mc[in.byte() & 3];
	if (e.type == EventType::ConnectRequest) {
		if (!id->listening)
			return;
		Id *child = new_id();
		if (!child)
			return;
		child->h = id->h;
		child->ctx = id->ctx;
		child->info = id->info;
		child->info.dev = device();
		e.listen_id = id;
		deliver(*child, e);
		return;
	}
	deliver(*id, e);
}

ucma::File *open_file(int i)
{
	auto *f = new (Gfp::Sleep) ucma::File(waiters[i]);
	fuzz::check(f, "file");
	return f;
}

void close_file(int i)
{
	if (!files[i])
		return;
	files[i]->close();
	delete files[i];
	files[i] = nullptr;
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	files[0] = open_file(0);
	files[1] = open_file(1);
	nseen = 0;
	fuzz::Records in(data, size);
	inline_events = in.byte();
	ConstBytes rec;
	while (in.next(rec, 4096)) {
		if (rec.empty())
			continue;
		const uint8_t op = rec[0] % 4;
		const ConstBytes arg(rec.data() + 1, rec.size() - 1);
		switch (op) {
		case 0:
			command(in, arg);
			break;
		case 1:
			event(in, arg);
			break;
		case 2:
			weft_host_advance(in.byte());
			break;
		case 3:
			close_file(1);
			files[1] = open_file(1);
			break;
		}
	}
	close_file(0);
	close_file(1);
	weft_host_advance(1000);
	auto &s = ucma::stats();
	fuzz::check(s.files.load(Order::Relaxed) == 0 && s.ctxs.load(Order::Relaxed) == 0 &&
			    s.events.load(Order::Relaxed) == 0 &&
			    s.multicasts.load(Order::Relaxed) == 0,
		    "close leaves no file, Id, event or group");
	fuzz::check(live_ids == 0, "close destroys every RDMA CM Id");
	return 0;
}
