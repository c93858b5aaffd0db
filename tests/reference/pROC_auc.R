# Reference values for R pROC's DeLong interval of an ROC AUC and its paired DeLong test,
# used by perfci's Python test suite (tests/test_auc.py; the tests do not need R).
#
# Produced with:
#   R version 4.2.2 Patched (2022-11-10 r83330)   (R.version.string)
#   pROC 1.18.0                                    (packageVersion("pROC"))
#   (Debian bookworm packages r-base-core 4.2.2.20221110-2 and r-cran-proc)
#
# Run from the repository root:
#   Rscript tests/reference/pROC_auc.R
#
# Writes tests/reference/pROC_auc.json: one record per data set, with the data (labels
# y in {0, 1}, two scores a and b) and, for each score,
#   ci.auc(roc(y, s, levels = c(0, 1), direction = "<"), method = "delong", conf.level = L)
#   (low, auc, high) and var(roc, method = "delong"),
# and for the pair
#   roc.test(roc_a, roc_b, method = "delong", paired = TRUE, conf.level = L)
#   (statistic z, p.value, conf.int).
# `levels` and `direction` are given so that pROC neither guesses the positive class nor
# flips a score whose AUC is below 0.5 (perfci never flips). Numbers are written with
# sprintf("%.17g") so they round-trip exactly to doubles.

suppressPackageStartupMessages(library(pROC))

out_dir <- if (file.exists("tests/reference")) "tests/reference" else "."
cat("R:", R.version.string, "\n")
cat("pROC:", as.character(packageVersion("pROC")), "\n")

set.seed(20261130)

f17 <- function(x) {
  if (length(x) != 1) stop("scalar expected")
  if (is.na(x) || is.infinite(x)) return("null")
  sprintf("%.17g", x)
}
fvec <- function(x) paste0("[", paste(vapply(x, f17, ""), collapse = ", "), "]")
ivec <- function(x) paste0("[", paste(sprintf("%d", as.integer(x)), collapse = ", "), "]")
jstr <- function(s) paste0("\"", gsub("\"", "\\\\\"", s), "\"")

binormal <- function(n, prevalence, shift_a, shift_b, rho) {
  y <- rbinom(n, 1, prevalence)
  z1 <- rnorm(n)
  z2 <- rho * z1 + sqrt(1 - rho^2) * rnorm(n)
  list(y = y, a = shift_a * y + z1, b = shift_b * y + z2)
}

# ------------------------------------------------------------------ the data sets
sets <- list()
d <- binormal(40, 0.4, 1.2, 0.8, 0.5)
sets$continuous_40 <- c(d, what = "40 texts, continuous binormal scores (no ties)")
d <- binormal(60, 0.3, 1.0, 1.0, 0.7)
sets$ties_60 <- list(y = d$y, a = round(d$a, 1), b = round(d$b, 1),
                     what = "60 texts, scores rounded to 1 decimal (many ties, also across classes)")
sets$small_7 <- list(y = c(1, 1, 1, 0, 0, 0, 0), a = c(0.9, 0.6, 0.4, 0.6, 0.3, 0.2, 0.4),
                     b = c(0.8, 0.8, 0.3, 0.5, 0.3, 0.1, 0.6),
                     what = "7 texts (3 positives), with ties")
d <- binormal(80, 0.25, 4.0, 3.0, 0.3)
sets$near_perfect_80 <- c(d, what = "80 texts, a near-perfect score a (AUC near 1)")
d <- binormal(500, 0.2, 1.5, 1.3, 0.6)
sets$probabilities_500 <- list(y = d$y, a = round(plogis(d$a - 1), 2), b = round(plogis(d$b - 1), 2),
                               what = "500 texts, probabilities rounded to 2 decimals")
d <- binormal(50, 0.5, -0.7, 0.4, 0.2)
sets$below_half_50 <- c(d, what = "50 texts, score a ranks negatives higher (AUC below 0.5)")
d <- binormal(30, 0.5, 0.5, 0.5, 0.0)
sets$integer_scores_30 <- list(y = d$y, a = round(2 * d$a), b = round(d$b),
                               what = "30 texts, a few integer score values (heavy ties)")

# ------------------------------------------------------------------ reference values
one_roc <- function(y, s) roc(y, s, levels = c(0, 1), direction = "<", quiet = TRUE)

records <- character(0)
for (name in names(sets)) {
  s <- sets[[name]]
  for (level in c(0.95, 0.9)) {
    ra <- one_roc(s$y, s$a)
    rb <- one_roc(s$y, s$b)
    ca <- as.numeric(ci.auc(ra, method = "delong", conf.level = level))
    cb <- as.numeric(ci.auc(rb, method = "delong", conf.level = level))
    test <- roc.test(ra, rb, method = "delong", paired = TRUE, conf.level = level)
    fields <- c(
      sprintf('"name": %s', jstr(name)),
      sprintf('"what": %s', jstr(s$what)),
      sprintf('"confidence_level": %s', f17(level)),
      sprintf('"y": %s', ivec(s$y)),
      sprintf('"a": %s', fvec(s$a)),
      sprintf('"b": %s', fvec(s$b)),
      sprintf('"auc_a": %s', f17(ca[2])),
      sprintf('"low_a": %s', f17(ca[1])),
      sprintf('"high_a": %s', f17(ca[3])),
      sprintf('"var_a": %s', f17(var(ra, method = "delong"))),
      sprintf('"auc_b": %s', f17(cb[2])),
      sprintf('"low_b": %s', f17(cb[1])),
      sprintf('"high_b": %s', f17(cb[3])),
      sprintf('"var_b": %s', f17(var(rb, method = "delong"))),
      sprintf('"z": %s', f17(unname(test$statistic))),
      sprintf('"p_value": %s', f17(test$p.value)),
      sprintf('"diff_low": %s', f17(test$conf.int[1])),
      sprintf('"diff_high": %s', f17(test$conf.int[2]))
    )
    records <- c(records, paste0("  {", paste(fields, collapse = ", "), "}"))
  }
}

# ------------------------------------------------------------------ degenerate cases
# All scores tied: AUC 0.5 and a DeLong variance of 0, so ci.auc is (0.5, 0.5, 0.5).
# Perfect separation: AUC 1, variance 0, ci.auc (1, 1, 1). Identical scores a = b:
# roc.test's z is 0/0, which pROC sets to 0 (p = 1), with a zero-width interval.
edge <- list(
  all_tied = list(y = c(1, 0, 1, 0, 0, 1, 0, 0), a = rep(0.5, 8), b = rep(0.5, 8)),
  perfect = list(y = c(1, 1, 1, 0, 0, 0, 0), a = c(0.9, 0.8, 0.7, 0.6, 0.5, 0.2, 0.1),
                 b = c(0.9, 0.8, 0.7, 0.6, 0.5, 0.2, 0.1))
)
for (name in names(edge)) {
  s <- edge[[name]]
  ra <- one_roc(s$y, s$a)
  rb <- one_roc(s$y, s$b)
  ca <- as.numeric(ci.auc(ra, method = "delong"))
  test <- suppressWarnings(roc.test(ra, rb, method = "delong", paired = TRUE))
  fields <- c(
    sprintf('"name": %s', jstr(name)),
    sprintf('"what": %s', jstr("degenerate: zero DeLong variance")),
    sprintf('"confidence_level": %s', f17(0.95)),
    sprintf('"y": %s', ivec(s$y)),
    sprintf('"a": %s', fvec(s$a)),
    sprintf('"b": %s', fvec(s$b)),
    sprintf('"auc_a": %s', f17(ca[2])),
    sprintf('"low_a": %s', f17(ca[1])),
    sprintf('"high_a": %s', f17(ca[3])),
    sprintf('"var_a": %s', f17(var(ra, method = "delong"))),
    sprintf('"z": %s', f17(unname(test$statistic))),
    sprintf('"p_value": %s', f17(test$p.value)),
    sprintf('"diff_low": %s', f17(test$conf.int[1])),
    sprintf('"diff_high": %s', f17(test$conf.int[2]))
  )
  records <- c(records, paste0("  {", paste(fields, collapse = ", "), "}"))
}

header <- sprintf('{"R": %s, "pROC": %s, "records": [\n',
                  jstr(R.version.string), jstr(as.character(packageVersion("pROC"))))
text <- paste0(header, paste(records, collapse = ",\n"), "\n]}\n")
path <- file.path(out_dir, "pROC_auc.json")
writeLines(text, path, sep = "")
if (requireNamespace("jsonlite", quietly = TRUE)) invisible(jsonlite::fromJSON(path))
cat("wrote", path, "(", length(records), "records )\n")
