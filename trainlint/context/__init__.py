"""Stage 3, context: what surrounds a file and decides how it runs.

`settings` reads CLI flags, `# trainlint:` directive comments and `[tool.trainlint]` / `trainlint.toml`;
`suppressions` reads `disable=` comments. May import: `document`, `plan`, `catalog`, `diagnostics`.
"""
