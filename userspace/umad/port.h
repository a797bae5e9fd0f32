/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CA port as user_mad shows it: umadN and issmN (shim_umad.c), the files
 * open on umadN, and the IsSM hold of issmN.  Refcounted: the verbs client
 * holds one reference from add() to remove(), each device node one until
 * it is freed, each open file one until it is closed.  After remove()
 * (kill()) the port keeps no pointer into the device or the MAD layer.
 */
#ifndef WEFT_UMAD_PORT_H
#define WEFT_UMAD_PORT_H

#include <weft/atomic.h>
#include <weft/mad/port.h>
#include <weft/ref.h>

#include "file.h"
#include "umad_kapi.h"

namespace weft::umad {

class Port final : public RefCounted<Port>, public Services {
public:
	Port(verbs::Device &dev, mad::MadPort &mp, uint8_t port, uint32_t num);
	WEFT_NOCOPY(Port);

	/* Create umadN and issmN. */
	Result<void> start();
	/*
	 * The device goes (two-phase): mark dead so that opens and
	 * registrations fail, kill every open file (agents unregistered,
	 * readers woken), forget the device, then remove the nodes.
	 */
	void kill();

	/* Services; called with lock_ held (ioctl path). */
	mad::MadService *service(uint8_t qpn) override;

	/* umadN. */
	Result<File *> open_file(Waker w);
	void close_file(File &f);
	Result<void> ioctl(File &f, unsigned int cmd, UserBuf &arg);

	/* Received MADs the files of this port dropped (file.h's queue bounds), closed ones too. */
	uint64_t recv_dropped();

	/* issmN. */
	Result<void> issm_open();
	bool issm_busy() const;
	void issm_release();

	const uint8_t port_num;
	const uint32_t num;
	verbs::Device *const device_id; /* identity only, never dereferenced after kill() */
	ListNode node;			/* on the client's list */

private:
	Mutex lock_;
	verbs::Device *dev_;		      /* under lock_; nullptr after kill() */
	mad::MadPort *mp_;		      /* under lock_; nullptr after kill() */
	List<File, &File::node> files_;	      /* under lock_ */
	uint64_t closed_dropped_ = 0;	      /* under lock_: drops of files closed */
	/* Set under lock_ (and read Relaxed there); issm_busy() reads them without it. */
	Atomic<bool> dead_{false};
	Atomic<bool> sm_held_{false};
	weft_umad_cdev *umad_ = nullptr, *issm_ = nullptr;
};

} // namespace weft::umad

#endif
