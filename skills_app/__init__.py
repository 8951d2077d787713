"""Project and user skills: loading, frontmatter schemas and evals."""
