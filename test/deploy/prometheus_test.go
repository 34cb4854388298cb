package deploy

import (
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/config"
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
	prod, err := config.LoadProducer(nil, envOf(service(t, p, svcProducer)))
	if err != nil {
		t.Fatal(err)
	}
	work, err := config.LoadWorker(nil, envOf(service(t, p, svcWorker)))
	if err != nil {
		t.Fatal(err)
	}
	wantProducer := net.JoinHostPort(svcProducer, listenPort(t, prod.Listen))
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
		t.Errorf("%s does not scrape %s (the producer's %s)", prometheusFile, wantProducer, config.EnvListen)
	}
	if !workersScraped {
		t.Errorf("%s does not discover the worker replicas by DNS (A records of %q, port %s from %s)",
			prometheusFile, svcWorker, workerPort, config.EnvWorkerListen)
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
