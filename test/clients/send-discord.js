// Posts one message through discord.js's WebhookClient, its REST base
// pointed at HERALD_DISCORD_API (the webhook id and token in
// HERALD_DISCORD_ID and HERALD_DISCORD_TOKEN), and prints the message the
// client returns as JSON. Run by internal/inbound's clients test.
const { WebhookClient, EmbedBuilder } = require("discord.js");

async function main() {
  const client = new WebhookClient(
    { id: process.env.HERALD_DISCORD_ID, token: process.env.HERALD_DISCORD_TOKEN },
    { rest: { api: process.env.HERALD_DISCORD_API, retries: 0 } },
  );
  const embed = new EmbedBuilder()
    .setTitle("Backup __failed__ on nas-1")
    .setURL("https://nas.example/backups")
    .setDescription("**rsync** exited with `23` — see [the log](https://nas.example/log) ||details||")
    .setColor(0xe74c3c)
    .addFields({ name: "Job", value: "~~nightly~~ weekly" }, { name: "Owner", value: "<@123456789012345678>" })
    .setFooter({ text: "backup-bot" })
    .setTimestamp(new Date("2026-12-04T12:00:00Z"))
    .setImage("https://nas.example/graph.png");
  const message = await client.send({ content: "> heads up <@&987654321098765432>", username: "backup-bot", embeds: [embed] });
  console.log(JSON.stringify({ id: message.id, webhook_id: message.webhook_id, content: message.content }));
  client.destroy();
}

main().catch((err) => {
  console.error(err && err.message ? err.message : err);
  process.exit(1);
});
