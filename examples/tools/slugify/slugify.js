// slugify: the simple protocol in Node. Read the arguments from stdin,
// print the result on stdout. Plain text (not JSON) becomes a text result.
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { text, separator = "-" } = JSON.parse(input);
  const slug = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator)
    .split(separator)
    .filter(Boolean)
    .join(separator);
  process.stdout.write(slug + "\n");
});
