package services_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/services"
)

// BenchmarkDockerEnsureHealthy is the dependency check a call pays when its
// service is already healthy, against the real engine with the default
// staleness bound (2s): nearly every check is answered from the cache, one
// per 2s asks the engine. It reports the p50 and p99 of single checks.
func BenchmarkDockerEnsureHealthy(b *testing.B) {
	testenv.Docker(b)
	m, err := services.New([]services.Spec{kvSpecB(b)}, services.Options{Project: projectPrefix + "-bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	defer func() { m.Close(ctx); m.Down(ctx) }()
	if _, err := m.Ensure(ctx, "kv"); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := m.Ensure(ctx, "kv"); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkDockerColdStart times a cold start of the kv service split into
// create, start and healthy (first passing health check), plus the whole
// Ensure through the manager.
func BenchmarkDockerColdStart(b *testing.B) {
	testenv.Docker(b)
	sp := kvSpecB(b)
	ctx := context.Background()
	eng, err := services.NewDockerEngine()
	if err != nil {
		b.Fatal(err)
	}
	m, err := services.New([]services.Spec{sp}, services.Options{Project: projectPrefix + "-cold", Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Up(ctx, nil, false, "kv"); err != nil { // the image, built once
		b.Fatal(err)
	}
	m.Down(ctx)
	var create, start, healthy, ensure time.Duration
	for b.Loop() {
		name := services.ContainerName(projectPrefix+"-cold", "raw")
		t0 := time.Now()
		id, err := eng.Create(ctx, &services.ContainerConfig{
			Name: name, Image: kvImage, Labels: map[string]string{services.LabelManaged: "true", services.LabelProject: projectPrefix + "-cold"},
			Ports: []services.Port{{Container: 6379, Host: 0, Protocol: "tcp"}}, Init: true, Network: "bridge",
			Health: sp.Healthcheck,
		})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := eng.Start(ctx, id); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		for {
			c, err := eng.Inspect(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if c.Health == "healthy" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		t3 := time.Now()
		eng.Remove(ctx, id)
		create, start, healthy = create+t1.Sub(t0), start+t2.Sub(t1), healthy+t3.Sub(t2)

		t4 := time.Now()
		if _, err := m.Ensure(ctx, "kv"); err != nil {
			b.Fatal(err)
		}
		ensure += time.Since(t4)
		m.Down(ctx)
	}
	n := float64(b.N)
	b.ReportMetric(float64(create.Milliseconds())/n, "create-ms")
	b.ReportMetric(float64(start.Milliseconds())/n, "start-ms")
	b.ReportMetric(float64(healthy.Milliseconds())/n, "healthy-ms")
	b.ReportMetric(float64(ensure.Milliseconds())/n, "ensure-ms")
	m.Close(ctx)
}

func kvSpecB(b *testing.B) services.Spec {
	sp := kvDef("kv")
	sp.Build = &services.Build{Context: testenv.StaticImage(b, "services/testdata/kv", "")}
	return sp
}
