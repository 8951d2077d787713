"""Work from issues: a labelled issue on the project's forge becomes an intent, SF
comments there with the plan and the outcome, and a comment there is a follow-up
(docs/forge.md, "Work from issues")."""
