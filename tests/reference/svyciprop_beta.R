# Reference values for survey::svyciprop(method = "beta") on nested binary data
# (texts nested in persons), used by perfci's Python test suite.
#
# Produced with:
#   R version 4.2.2 Patched (2022-11-10 r83330)   (R.version.string)
#   survey 4.1.1                                   (packageVersion("survey"))
#   (Debian bookworm packages r-base-core 4.2.2.20221110-2, r-cran-survey 4.1-1-1,
#    r-cran-jsonlite 1.8.4+dfsg-1; jsonlite is only used to check the output parses)
#
# Run from the repository root:
#   Rscript tests/reference/svyciprop_beta.R
#
# Writes:
#   tests/reference/svyciprop_beta.json             40 data sets x levels (finite values)
#   tests/reference/svyciprop_beta_edge_cases.json  degenerate designs (NaN / errors)
#
# Design: one-stage cluster design, clusters = persons, equal weights:
#   d <- svydesign(ids = ~person, data = df)
# Numbers are written with sprintf("%.17g") so they round-trip exactly to doubles.

suppressPackageStartupMessages(library(survey))

out_dir <- if (file.exists("tests/reference")) "tests/reference" else "."
cat("R:", R.version.string, "\n")
cat("survey:", as.character(packageVersion("survey")), "\n")

set.seed(20261130)

# ---------------------------------------------------------------- helpers
draw_n <- function(m, style) {
  switch(style,
    bal3  = sample(2:4, m, replace = TRUE),                       # ~3 texts/person
    bal30 = sample(25:35, m, replace = TRUE),                     # ~30 texts/person
    unif  = sample(1:40, m, replace = TRUE),
    unbal = ifelse(runif(m) < 0.7, sample(1:3, m, replace = TRUE),
                   sample(30:40, m, replace = TRUE)),             # highly unbalanced
    one40 = { n <- rep(1L, m); n[sample.int(m, max(1, m %/% 5))] <- 40L; n },
    stop("unknown style"))
}

draw_y <- function(n, mu, kappa) {
  p <- rbeta(length(n), mu * kappa, (1 - mu) * kappa)
  rbinom(length(n), n, p)
}

ok_design <- function(y, n) {
  # finite beta interval needs 0 < p < 1 and a non-zero linearization variance
  p <- sum(y) / sum(n)
  v <- sum((y - p * n)^2)
  p > 0 && p < 1 && v > 1e-12
}

make_df <- function(y, n) {
  person <- rep(seq_along(n), n)
  yy <- unlist(lapply(seq_along(n), function(i) c(rep(1L, y[i]), rep(0L, n[i] - y[i]))))
  data.frame(person = person, y = yy)
}

f17 <- function(x) {
  if (length(x) != 1) stop("scalar expected")
  if (is.na(x)) return("null")          # NaN / NA -> JSON null
  if (is.infinite(x)) return("null")
  sprintf("%.17g", x)
}
# svydesign() warns "No weights or probabilities supplied, assuming equal
# probability" -- equal weights are intended, so only that warning is muffled.
cluster_design <- function(df) {
  withCallingHandlers(svydesign(ids = ~person, data = df),
    warning = function(w) if (grepl("No weights or probabilities", conditionMessage(w)))
      invokeRestart("muffleWarning"))
}
ivec <- function(x) paste0("[", paste(sprintf("%d", as.integer(x)), collapse = ", "), "]")
jstr <- function(s) paste0("\"", gsub("\"", "\\\\\"", s), "\"")

# ---------------------------------------------------------------- data set specs
# m, n style, Beta mean, Beta concentration (kappa = a + b)
specs <- list(
  list(m = 2,  style = "bal3",  mu = 0.80, kappa = 10),
  list(m = 2,  style = "bal30", mu = 0.90, kappa = 20),
  list(m = 2,  style = "unbal", mu = 0.70, kappa = 5),
  list(m = 2,  style = "bal30", mu = 0.98, kappa = 50),
  list(m = 3,  style = "bal3",  mu = 0.60, kappa = 4),
  list(m = 3,  style = "bal30", mu = 0.95, kappa = 30),
  list(m = 3,  style = "unif",  mu = 0.85, kappa = 8),
  list(m = 3,  style = "bal30", mu = 0.97, kappa = 100),
  list(m = 5,  style = "bal3",  mu = 0.50, kappa = 2),
  list(m = 5,  style = "bal30", mu = 0.97, kappa = 60),
  list(m = 5,  style = "unbal", mu = 0.90, kappa = 10),
  list(m = 5,  style = "unif",  mu = 0.98, kappa = 40),
  list(m = 4,  style = "bal3",  mu = 0.75, kappa = 6),
  list(m = 6,  style = "bal30", mu = 0.65, kappa = 3),
  list(m = 7,  style = "one40", mu = 0.80, kappa = 5),
  list(m = 8,  style = "unif",  mu = 0.55, kappa = 2),
  list(m = 10, style = "bal3",  mu = 0.90, kappa = 15),
  list(m = 10, style = "bal30", mu = 0.96, kappa = 80),
  list(m = 12, style = "unbal", mu = 0.70, kappa = 4),
  list(m = 15, style = "bal3",  mu = 0.98, kappa = 100),
  list(m = 15, style = "bal30", mu = 0.60, kappa = 10),
  list(m = 18, style = "unif",  mu = 0.92, kappa = 12),
  list(m = 20, style = "one40", mu = 0.85, kappa = 6),
  list(m = 20, style = "bal30", mu = 0.98, kappa = 200),
  list(m = 25, style = "bal3",  mu = 0.50, kappa = 1),
  list(m = 25, style = "unbal", mu = 0.96, kappa = 30),
  list(m = 30, style = "bal30", mu = 0.80, kappa = 8),
  list(m = 30, style = "unif",  mu = 0.97, kappa = 60),
  list(m = 35, style = "bal3",  mu = 0.65, kappa = 5),
  list(m = 40, style = "unbal", mu = 0.88, kappa = 10),
  list(m = 40, style = "bal30", mu = 0.99, kappa = 300),
  list(m = 45, style = "unif",  mu = 0.75, kappa = 3),
  list(m = 50, style = "bal3",  mu = 0.95, kappa = 40),
  list(m = 50, style = "one40", mu = 0.90, kappa = 20),
  list(m = 55, style = "bal30", mu = 0.70, kappa = 2),
  list(m = 60, style = "unif",  mu = 0.96, kappa = 50),
  list(m = 60, style = "bal3",  mu = 0.85, kappa = 7),
  list(m = 60, style = "unbal", mu = 0.58, kappa = 3),
  # special: several persons with all successes (forced)
  list(m = 12, style = "unif",  mu = 0.85, kappa = 6, special = "some_all_success"),
  # special: every text a success except exactly one
  list(m = 10, style = "unif",  mu = 0.90, kappa = 10, special = "one_failure")
)
stopifnot(length(specs) == 40)

levels_for <- function(id) if (id %in% c(1, 5, 9, 20, 33, 40)) c(0.95, 0.90, 0.80) else c(0.95, 0.90)

records <- character(0)
summary_rows <- list()

for (id in seq_along(specs)) {
  s <- specs[[id]]
  repeat {
    n <- as.integer(draw_n(s$m, s$style))
    y <- as.integer(draw_y(n, s$mu, s$kappa))
    if (!is.null(s$special) && s$special == "some_all_success") {
      k <- 1:4
      y[k] <- n[k]
    }
    if (!is.null(s$special) && s$special == "one_failure") {
      y <- n
      j <- which(n >= 2)[1]
      y[j] <- n[j] - 1L
    }
    if (ok_design(y, n)) break
  }
  df <- make_df(y, n)
  d <- cluster_design(df)
  se <- as.numeric(SE(svymean(~y, d)))
  dg <- degf(d)
  for (L in levels_for(id)) {
    cb <- svyciprop(~y, d, method = "beta", level = L)
    cl <- svyciprop(~y, d, method = "logit", level = L)
    cbi <- tryCatch(svyciprop(~y, d, method = "beta", level = L, df = Inf),
                    error = function(e) NULL)
    est <- as.numeric(coef(cb)); ci <- as.numeric(confint(cb)); cil <- as.numeric(confint(cl))
    fields <- c(
      paste0("\"id\": ", id),
      paste0("\"successes\": ", ivec(y)),
      paste0("\"trials\": ", ivec(n)),
      paste0("\"confidence_level\": ", f17(L)),
      paste0("\"estimate\": ", f17(est)),
      paste0("\"low\": ", f17(ci[1])),
      paste0("\"high\": ", f17(ci[2])),
      paste0("\"se\": ", f17(se)),
      paste0("\"degf\": ", dg),
      paste0("\"logit_low\": ", f17(cil[1])),
      paste0("\"logit_high\": ", f17(cil[2]))
    )
    if (!is.null(cbi)) {
      cii <- as.numeric(confint(cbi))
      fields <- c(fields,
                  paste0("\"beta_df_inf_low\": ", f17(cii[1])),
                  paste0("\"beta_df_inf_high\": ", f17(cii[2])))
    }
    records <- c(records, paste0("  {", paste(fields, collapse = ", "), "}"))
    cat(sprintf("id=%2d m=%2d N=%4d p=%.4f L=%.2f beta=[%.17g, %.17g] logit=[%.6f, %.6f] se=%.6g degf=%d\n",
                id, length(n), sum(n), est, L, ci[1], ci[2], cil[1], cil[2], se, dg))
  }
}

json_path <- file.path(out_dir, "svyciprop_beta.json")
writeLines(c("[", paste(records, collapse = ",\n"), "]"), json_path)

# ---------------------------------------------------------------- edge cases
# Degenerate designs: record what R returns (NaN -> null) or the error message.
edge <- list(
  list(name = "all_successes",        successes = c(3L, 30L, 5L),  trials = c(3L, 30L, 5L)),
  list(name = "all_failures",         successes = c(0L, 0L, 0L),   trials = c(3L, 30L, 5L)),
  list(name = "equal_person_rates",   successes = c(1L, 2L, 4L),   trials = c(2L, 4L, 8L)),
  list(name = "single_person",        successes = c(7L),           trials = c(10L)),
  list(name = "one_text_per_person",  successes = c(1L, 1L, 0L, 1L, 1L), trials = c(1L, 1L, 1L, 1L, 1L))
)
edge_records <- character(0)
for (e in edge) {
  df <- make_df(e$successes, e$trials)
  res <- tryCatch({
    d <- cluster_design(df)
    se <- as.numeric(SE(svymean(~y, d)))
    cb <- svyciprop(~y, d, method = "beta", level = 0.95)
    cl <- tryCatch(as.numeric(confint(svyciprop(~y, d, method = "logit", level = 0.95))),
                   error = function(err) c(NA, NA), warning = function(w) {
                     suppressWarnings(as.numeric(confint(svyciprop(~y, d, method = "logit", level = 0.95))))
                   })
    list(ok = TRUE, est = as.numeric(coef(cb)), ci = as.numeric(confint(cb)), se = se,
         degf = degf(d), logit = cl)
  }, error = function(err) list(ok = FALSE, msg = conditionMessage(err)))
  fields <- c(
    paste0("\"name\": ", jstr(e$name)),
    paste0("\"successes\": ", ivec(e$successes)),
    paste0("\"trials\": ", ivec(e$trials)),
    "\"confidence_level\": 0.94999999999999996"
  )
  if (res$ok) {
    fields <- c(fields,
      paste0("\"estimate\": ", f17(res$est)),
      paste0("\"low\": ", f17(res$ci[1])),
      paste0("\"high\": ", f17(res$ci[2])),
      paste0("\"se\": ", f17(res$se)),
      paste0("\"degf\": ", res$degf),
      paste0("\"logit_low\": ", f17(res$logit[1])),
      paste0("\"logit_high\": ", f17(res$logit[2])),
      "\"error\": null")
    cat(sprintf("edge %-20s est=%s beta=[%s, %s] se=%s degf=%d logit=[%s, %s]\n", e$name,
                f17(res$est), f17(res$ci[1]), f17(res$ci[2]), f17(res$se), res$degf,
                f17(res$logit[1]), f17(res$logit[2])))
  } else {
    fields <- c(fields, paste0("\"error\": ", jstr(res$msg)))
    cat(sprintf("edge %-20s ERROR: %s\n", e$name, res$msg))
  }
  edge_records <- c(edge_records, paste0("  {", paste(fields, collapse = ", "), "}"))
}
edge_path <- file.path(out_dir, "svyciprop_beta_edge_cases.json")
writeLines(c("[", paste(edge_records, collapse = ",\n"), "]"), edge_path)

# check that the JSON parses (jsonlite optional)
if (requireNamespace("jsonlite", quietly = TRUE)) {
  x <- jsonlite::fromJSON(json_path, simplifyVector = FALSE)
  invisible(jsonlite::fromJSON(edge_path, simplifyVector = FALSE))
  cat("wrote", length(x), "records to", json_path, "\n")
}
