// SPDX-License-Identifier: GPL-2.0
/* weft_iser's C entry points (iser_kapi.h) onto Conn. */
#include "initiator.h"

using namespace weft;
using namespace weft::iser;

namespace {

Conn *conn_of(void *p) { return static_cast<Conn *>(p); }

rdma_cm::SockAddr from_c(const weft_iser_addr &a)
{
	rdma_cm::SockAddr s;
	s.family = a.family;
	s.port = a.port;
	__builtin_memcpy(s.ip, a.ip, sizeof(s.ip));
	s.scope_id = a.scope_id;
	return s;
}

} // namespace

void weft_iser_set_params(uint32_t max_sectors) { params.max_sectors = max_sectors; }

int weft_iser_module_init(void) { return 0; }
void weft_iser_module_exit(void) {}

void *weft_iser_ep_connect(const struct weft_iser_addr *dst, int *err)
{
	if (dst->family != rdma_cm::af_inet && dst->family != rdma_cm::af_inet6) {
		*err = -err::EAFNOSUPPORT;
		return nullptr;
	}
	Conn *c = new (Gfp::Sleep) Conn();
	if (!c) {
		*err = -err::ENOMEM;
		return nullptr;
	}
	if (auto r = c->connect(from_c(*dst)); !r) {
		*err = -r.error().code();
		c->put();
		return nullptr;
	}
	return c;
}

int weft_iser_ep_poll(void *conn, int timeout_ms) { return conn_of(conn)->poll_up(timeout_ms); }

void weft_iser_ep_disconnect(void *conn)
{
	conn_of(conn)->shutdown();
	conn_of(conn)->put();
}

int weft_iser_ep_peer(void *conn, struct weft_iser_addr *out)
{
	auto r = conn_of(conn)->peer();
	if (!r)
		return -r.error().code();
	out->family = r->family;
	out->port = r->port;
	__builtin_memcpy(out->ip, r->ip, sizeof(out->ip));
	out->scope_id = r->scope_id;
	return 0;
}

int weft_iser_limits(void *conn, struct weft_iser_limits *out)
{
	if (!conn_of(conn)->up())
		return -err::EINVAL;
	conn_of(conn)->limits(*out);
	return 0;
}

int weft_iser_bind(void *conn, void *iconn)
{
	auto r = conn_of(conn)->bind(iconn);
	if (!r)
		return -r.error().code();
	conn_of(conn)->get();
	return 0;
}

void weft_iser_unbind(void *conn)
{
	conn_of(conn)->unbind();
	conn_of(conn)->put();
}

int weft_iser_send_control(void *conn, void *task, uint8_t *hdrs, const void *data, uint32_t len,
			   bool login_task, bool to_ffp, bool no_response)
{
	return conn_of(conn)->send_control(task, hdrs, data, len, login_task, to_ffp, no_response);
}

int weft_iser_send_command(void *conn, void *task, uint8_t *hdrs, const struct weft_iser_cmd *c)
{
	return conn_of(conn)->send_command(task, hdrs, *c);
}

int weft_iser_send_data_outs(void *conn, void *task, const struct weft_iser_cmd *c)
{
	auto r = conn_of(conn)->send_data_outs(task, *c);
	return r ? 0 : -r.error().code();
}

void weft_iser_task_done(void *conn, uint32_t slot) { conn_of(conn)->task_done(slot); }
