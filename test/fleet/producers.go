package fleet

import (
	"context"
	"fmt"
	"path/filepath"
)

// StartProducerProc starts one more producer process with extra environment
// (routing, heartbeat check interval...) on a free port and waits until it
// is ready. Unlike StartProducer it leaves f.Producer alone; the caller
// stops the process (Close does not).
func (f *Fleet) StartProducerProc(ctx context.Context, name string, extra ...string) (*Proc, string, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, "", err
	}
	env := append(f.commonEnv(), f.producerEnv(addr)...)
	env = append(env, extra...)
	p, err := Start(name, f.Bins.Producer, nil, env, filepath.Join(f.Dir, name+".log"))
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	if err := p.WaitReady(ctx, base+"/readyz"); err != nil {
		p.Kill()
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return p, base, nil
}
