// Posts one message through Slack's own client, @slack/webhook's
// IncomingWebhook, to the URL in HERALD_SLACK_URL, and prints the client's
// result as JSON. Run by internal/inbound's clients test.
const { IncomingWebhook } = require("@slack/webhook");

async function main() {
  const hook = new IncomingWebhook(process.env.HERALD_SLACK_URL, { username: "ci-bot" });
  const result = await hook.send({
    text: "*Deploy failed* on _prod_ — see <https://ci.example/run/42|run 42> <!here>",
    blocks: [
      { type: "header", text: { type: "plain_text", text: "Deploy failed: api v2.3.1" } },
      { type: "section", text: { type: "mrkdwn", text: "*Stage:* `migrate` ~retry~" },
        fields: [{ type: "mrkdwn", text: "*Env:*\nprod" }, { type: "mrkdwn", text: "*By:*\n<@U024BE7LH>" }] },
      { type: "divider" },
      { type: "context", elements: [{ type: "mrkdwn", text: "from <https://ci.example|CI>" }] },
    ],
    attachments: [{ color: "danger", title: "Log tail", text: "error: relation \"users\" does not exist", footer: "ci.example" }],
  });
  console.log(JSON.stringify(result));
}

main().catch((err) => {
  console.error(err && err.message ? err.message : err);
  process.exit(1);
});
