package etcdtest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServerAndProxy checks the helpers themselves: a put through the
// proxy is read back directly, and a read through a downed proxy fails
// until it is up again.
func TestServerAndProxy(t *testing.T) {
	s := Start(t)
	p := NewProxy(t, s.Endpoint())
	viaProxy := NewClient(t, p.Endpoint())
	direct := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	if _, err := viaProxy.Put(ctx, "/k", "v"); err != nil {
		t.Fatalf("put through the proxy: %v", err)
	}
	resp, err := direct.Get(ctx, "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("get /k directly = %v, %v; want v", resp, err)
	}
	p.SetDown(true)
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = viaProxy.Get(short, "/k")
	cancelShort()
	if err == nil {
		t.Fatal("get through a downed proxy succeeded")
	}
	p.SetDown(false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		short, cancelShort := context.WithTimeout(ctx, time.Second)
		_, err = viaProxy.Get(short, "/k")
		cancelShort()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get through the proxy up again: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rev := s.Compact(direct); rev < 2 {
		t.Errorf("compacted at revision %d, want ≥ 2 after a put", rev)
	}
}
