package settings

import (
	"strings"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/redisconn"
)

// commonSpecs are the settings both binaries share.
func commonSpecs(r *redisconn.Config, l *config.Log, bots *[]string) []config.Spec {
	return append(r.Specs(),
		config.NewSpec(config.EnvLogLevel, "info", "Minimum log level: debug, info, warn or error.", config.LevelVar(&l.Level)),
		config.NewSpec(config.EnvLogFormat, config.LogFormatAuto, "Log format: json, text, or auto (text on a terminal, JSON otherwise).", config.FormatVar(&l.Format)),
		config.NewSpec(EnvBots, strings.Join(defaultBots, ","), botsHelp, botsVar(bots)),
	)
}
