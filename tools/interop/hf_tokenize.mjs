// Tokenises lines with Hugging Face's own tokenizer code (the npm
// @huggingface/tokenizers package): node hf_tokenize.mjs tokenizer.json
// < lines > ids.jsonl, one {"tokens": [...], "ids": [...]} a line, without
// special tokens (as sentence-transformers' StaticEmbedding and model2vec
// encode). The check of parastream's static exports
// (scripts/export_check.py) reads its output.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Tokenizer } from "@huggingface/tokenizers";

const path = process.argv[2];
if (!path) {
  console.error("usage: node hf_tokenize.mjs tokenizer.json < lines > ids.jsonl");
  process.exit(2);
}
const json = JSON.parse(readFileSync(path, "utf8"));
// The JS port reads a WordLevel model's unknown token from the tokenizer
// config (tokenizer_config.json), the Rust library from the model itself:
// hand it the model's.
const tok = new Tokenizer(json, { unk_token: json.model.unk_token });
const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  const enc = tok.encode(line, { add_special_tokens: false });
  process.stdout.write(JSON.stringify({ tokens: enc.tokens, ids: enc.ids }) + "\n");
}
