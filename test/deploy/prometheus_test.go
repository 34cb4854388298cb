package deploy

import (
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/settings"
	"go.yaml.in/yaml/v4"
)

// promConfig is the part of a Prometheus configuration the test reads.
type promConfig struct {
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
		DNSSDConfigs []struct {
			Names []string `yaml:"names"`
			Type  string   `yaml:"type"`
			Port  int      `yaml:"port"`
		} `yaml:"dns_sd_configs"`
	} `yaml:"scrape_configs"`
}

func TestPrometheusScrapesEveryHeraldProcess(t *testing.T) {
	t.Parallel()
	var pc promConfig
	if err := yaml.Unmarshal([]byte(readRepoFile(t, prometheusFile)), &pc); err != nil {
		t.Fatalf("%s: %v", prometheusFile, err)
	}
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring"}})
	prod, err := settings.LoadProducer(nil, envOf(service(t, p, svcProducer)))
	if err != nil {
		t.Fatal(err)
	}
	work, err := settings.LoadWorker(nil, envOf(service(t, p, svcWorker)))
	if err != nil {
		t.Fatal(err)
	}
	wantProducer := net.JoinHostPort(svcProducer, listenPort(t, prod.Server.Listen))
	workerPort := listenPort(t, work.Listen)

	var producerScraped, workersScraped bool
	for _, sc := range pc.ScrapeConfigs {
		if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
			t.Errorf("job %s scrapes %s; both binaries serve /metrics", sc.JobName, sc.MetricsPath)
		}
		for _, st := range sc.StaticConfigs {
			if slices.Contains(st.Targets, wantProducer) {
				producerScraped = true
			}
			for _, target := range st.Targets {
				if host, _, _ := net.SplitHostPort(target); host == svcWorker {
					t.Errorf("job %s scrapes %s statically; that reaches one replica, use dns_sd_configs", sc.JobName, target)
				}
			}
		}
		for _, dns := range sc.DNSSDConfigs {
			if slices.Contains(dns.Names, svcWorker) && dns.Type == "A" && strconv.Itoa(dns.Port) == workerPort {
				workersScraped = true
			}
		}
	}
	if !producerScraped {
		t.Errorf("%s does not scrape %s (the producer's %s)", prometheusFile, wantProducer, producer.EnvListen)
	}
	if !workersScraped {
		t.Errorf("%s does not discover the worker replicas by DNS (A records of %q, port %s from %s)",
			prometheusFile, svcWorker, workerPort, settings.EnvWorkerListen)
	}

	// The compose service mounts exactly this file where Prometheus reads it.
	prom := service(t, p, svcPrometheus)
	mounted := false
	for _, v := range prom.Volumes {
		if v.Target == "/etc/prometheus/prometheus.yml" && v.Source == filepath.Join(p.WorkingDir, prometheusFile) {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("prometheus does not mount %s at /etc/prometheus/prometheus.yml: %+v", prometheusFile, prom.Volumes)
	}
	if arg, ok := flagPrefixed(prom.Command, "--config.file="); ok && arg != "/etc/prometheus/prometheus.yml" {
		t.Errorf("prometheus --config.file=%s, but the configuration is mounted at /etc/prometheus/prometheus.yml", arg)
	}
}

// flagPrefixed returns the value of the first argument starting with prefix.
func flagPrefixed(cmd []string, prefix string) (string, bool) {
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v, true
		}
	}
	return "", false
}

// TestWorkerMetricsServeTheNetwork: the worker's health and metrics server
// listens on loopback unless told otherwise, which would leave Prometheus
// (another container) with every worker target down. Both layouts, the base
// file and the replicated layer over it, must give the workers an address
// on every interface, set in the compose file rather than left to .env.
func TestWorkerMetricsServeTheNetwork(t *testing.T) {
	t.Parallel()
	declared := service(t, loadProject(t, loadOpts{declaredOnly: true}), svcWorker)
	if v, ok := declared.Environment[settings.EnvWorkerListen]; !ok || v == nil {
		t.Errorf("%s does not set %s for %s; its default %s is loopback only", composeFile, settings.EnvWorkerListen, svcWorker, settings.DefaultWorkerListen)
	}
	layouts := map[string]types.ServiceConfig{
		composeFile:    service(t, loadProject(t, loadOpts{dotEnv: exampleEnv(t)}), svcWorker),
		replicatedFile: service(t, loadReplicated(t), svcWorker),
	}
	for file, s := range layouts {
		cfg, err := settings.LoadWorker(nil, envOf(s))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		host, _, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			t.Fatalf("%s: %s = %q: %v", file, settings.EnvWorkerListen, cfg.Listen, err)
		}
		if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
			t.Errorf("%s: %s = %q listens on %s only; Prometheus scrapes each replica from its own container, so use \":%s\"",
				file, settings.EnvWorkerListen, cfg.Listen, host, listenPort(t, cfg.Listen))
		}
	}
}
