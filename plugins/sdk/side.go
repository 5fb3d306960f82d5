package sdk

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/skillgate/skillgate/plugins/sdk/internal/link"
	"github.com/skillgate/skillgate/plugins/sdk/internal/pb"
)

// The calls side channel of protocol 3: the executor offers a local socket
// in its Info answer, the host connects and sends the offer's token, and
// from then on the connection carries the Calls stream's frames and events
// as length-prefixed protobuf messages. A call then costs each side one
// write and one read of the socket, where gRPC adds HTTP/2 framing, flow
// control and a hand-off to its writer goroutine on both sides
// (BenchmarkCall: a round trip of ~13 µs and 28 allocations against ~23 µs
// and 59 on the Calls stream).

const (
	// sideTokenSize is the length of the secret that opens the side channel.
	sideTokenSize = 32
	// sideAuthTimeout bounds the token exchange of one connection.
	sideAuthTimeout = 5 * time.Second
	// sideMaxPending bounds connections that have not sent their token yet;
	// more are closed at once.
	sideMaxPending = 4
	// sideWriteTimeout fails a write the peer has not taken for this long:
	// a peer that stopped reading must not hold a call, or its writers,
	// forever.
	sideWriteTimeout = 30 * time.Second
	// sideKeepBuffer is the largest read or write buffer kept between
	// messages; a bigger message gets a buffer of its own.
	sideKeepBuffer = 256 << 10
)

// sideAcceptWindow is how long an offered socket waits for the host (a
// variable for tests).
var sideAcceptWindow = 30 * time.Second

// sideAccepted is the byte an executor answers a valid token with.
const sideAccepted = 1

// frameConn reads and writes length-prefixed protobuf messages on a
// connection: one reader at a time, any number of writers.
type frameConn struct {
	conn net.Conn
	r    *bufio.Reader
	rbuf []byte

	wmu      sync.Mutex
	wbuf     []byte
	deadline time.Time
}

func newFrameConn(c net.Conn) *frameConn {
	return &frameConn{conn: c, r: bufio.NewReaderSize(c, 32<<10)}
}

// write sends one message in one write.
func (f *frameConn) write(m proto.Message) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	b, err := proto.MarshalOptions{}.MarshalAppend(append(f.wbuf[:0], 0, 0, 0, 0), m)
	if err != nil {
		return err
	}
	n := len(b) - 4
	if n > link.MaxMessageSize {
		return fmt.Errorf("message of %d bytes is over the %d-byte limit", n, link.MaxMessageSize)
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	// Moving the deadline arms a runtime timer; doing it only when an
	// eighth of the period has gone keeps that off most writes.
	if now := time.Now(); f.deadline.Sub(now) < sideWriteTimeout*7/8 {
		f.deadline = now.Add(sideWriteTimeout)
		if err := f.conn.SetWriteDeadline(f.deadline); err != nil {
			return err
		}
	}
	_, err = f.conn.Write(b)
	if cap(b) <= sideKeepBuffer {
		f.wbuf = b[:0]
	}
	return err
}

// read receives one message into m.
func (f *frameConn) read(m proto.Message) error {
	var hdr [4]byte
	if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > link.MaxMessageSize {
		return fmt.Errorf("message of %d bytes is over the %d-byte limit", n, link.MaxMessageSize)
	}
	buf := f.rbuf
	if cap(buf) < n {
		buf = make([]byte, n)
		if n <= sideKeepBuffer {
			f.rbuf = buf
		}
	}
	buf = buf[:n]
	if _, err := io.ReadFull(f.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	// Unmarshal copies bytes fields, so the buffer can be reused.
	return proto.Unmarshal(buf, m)
}

func (f *frameConn) Close() error { return f.conn.Close() }

// sideClientStream is the host's end of a side channel, shaped like the
// Calls stream's client so that mux runs calls on either.
type sideClientStream struct{ fc *frameConn }

func (s sideClientStream) Send(f *pb.CallFrame) error { return s.fc.write(f) }

func (s sideClientStream) Recv() (*pb.CallEvent, error) {
	ev := new(pb.CallEvent)
	if err := s.fc.read(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// dialSide connects to an executor's side channel and presents the token.
func dialSide(ctx context.Context, address string, token []byte) (*frameConn, error) {
	if len(token) != sideTokenSize {
		return nil, fmt.Errorf("calls channel token has %d bytes, want %d", len(token), sideTokenSize)
	}
	ctx, cancel := context.WithTimeout(ctx, sideAuthTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", address)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	var ack [1]byte
	if _, err = c.Write(token); err == nil {
		_, err = io.ReadFull(c, ack[:])
	}
	if err == nil && ack[0] != sideAccepted {
		err = errors.New("the executor refused the token")
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("calls channel %s: %w", address, err)
	}
	_ = c.SetDeadline(time.Time{})
	return newFrameConn(c), nil
}

// sideOffer is an executor's listening side channel, waiting for the host.
type sideOffer struct {
	address string
	token   []byte
	ln      net.Listener
	taken   atomic.Bool // a host connected
	expired atomic.Bool // nobody did within sideAcceptWindow
	timer   *time.Timer
}

// offerSide listens on a fresh local socket and serves the first
// connection that presents the token with serve, which owns it from then
// on. It returns nil where the platform has no socket to offer.
func offerSide(serve func(*frameConn)) (*sideOffer, error) {
	address, err := sideAddress()
	if err != nil || address == "" {
		return nil, err
	}
	token := make([]byte, sideTokenSize)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", address)
	if err != nil {
		return nil, err
	}
	o := &sideOffer{address: address, token: token, ln: ln}
	o.timer = time.AfterFunc(sideAcceptWindow, func() {
		o.expired.Store(true)
		_ = ln.Close()
	})
	go o.accept(serve)
	return o, nil
}

// open reports whether the offer still waits for the host.
func (o *sideOffer) open() bool { return !o.taken.Load() && !o.expired.Load() }

func (o *sideOffer) close() {
	o.timer.Stop()
	_ = o.ln.Close()
}

func (o *sideOffer) accept(serve func(*frameConn)) {
	pending := make(chan struct{}, sideMaxPending)
	for {
		c, err := o.ln.Accept()
		if err != nil {
			return // closed: taken, timed out or the executor is ending
		}
		if !peerAllowed(c) {
			_ = c.Close()
			continue
		}
		select {
		case pending <- struct{}{}:
		default:
			_ = c.Close()
			continue
		}
		go func() {
			ok := o.authenticate(c)
			<-pending
			if !ok || !o.taken.CompareAndSwap(false, true) {
				_ = c.Close()
				return
			}
			o.close()
			if _, err := c.Write([]byte{sideAccepted}); err != nil || c.SetDeadline(time.Time{}) != nil {
				_ = c.Close()
				return
			}
			serve(newFrameConn(c))
		}()
	}
}

// authenticate reads the token, within sideAuthTimeout, and checks it.
func (o *sideOffer) authenticate(c net.Conn) bool {
	_ = c.SetDeadline(time.Now().Add(sideAuthTimeout))
	got := make([]byte, sideTokenSize)
	if _, err := io.ReadFull(c, got); err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, o.token) == 1
}
