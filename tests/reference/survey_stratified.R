# Reference values for weighted and stratified validation samples from R's survey
# package, used by perfci's Python test suite (tests/test_sample_design.py).
#
# Run from the repository root:
#   Rscript tests/reference/survey_stratified.R
#
# Writes tests/reference/survey_stratified.json: 16 data sets, each with its texts
# (stratum, person, truth, pred, weight, fpc) and, per design, what survey computes.
#
# Two designs per data set:
#   "fpc":      texts sampled within strata, finite population correction
#               svydesign(ids = ~1, strata = ~stratum, weights = ~weight, fpc = ~fpc, data = df)
#   "clusters": persons as clusters nested in strata, no finite population correction
#               svydesign(ids = ~person, strata = ~stratum, weights = ~weight, nest = TRUE,
#                         data = df)
# Per design: svyratio() estimate and SE of recall, precision, accuracy, specificity, npv,
# F1 and prevalence; svycontrast() of svytotal() of the four cells for kappa, MCC and
# balanced accuracy (linearized SE); svyciprop(method = "logit" and "beta") of recall
# (on subset(design, truth == 1)) and of precision (subset(design, pred == 1)) at levels
# 0.95 and 0.90, with degf() and nrow() of the subset.
# Numbers are written with sprintf("%.17g"), so they round-trip exactly to doubles.

suppressPackageStartupMessages(library(survey))

out_dir <- if (file.exists("tests/reference")) "tests/reference" else "."
cat("R:", R.version.string, "\n")
cat("survey:", as.character(packageVersion("survey")), "\n")
set.seed(20261202)

f17 <- function(x) {
  x <- as.numeric(x)
  if (length(x) != 1) stop("scalar expected")
  if (is.na(x) || !is.finite(x)) "null" else sprintf("%.17g", x)
}
vec <- function(x, fmt = "%d") paste0("[", paste(sprintf(fmt, x), collapse = ", "), "]")
vecd <- function(x) paste0("[", paste(vapply(x, f17, ""), collapse = ", "), "]")

# one data set: strata by prediction (and a second factor), persons, weights N_h / n_h
make_data <- function(id) {
  two_by_source <- id %% 4 == 0  # four strata: prediction x source
  n_pos <- sample(c(15, 40, 120, 300), 1)
  n_neg <- sample(c(40, 120, 300), 1)
  N_pos <- n_pos * sample(3:12, 1)
  N_neg <- n_neg * sample(20:120, 1)
  ppv <- runif(1, 0.55, 0.97)      # truth rate among predicted positives
  fomr <- runif(1, 0.02, 0.12)      # truth rate among predicted negatives
  persons <- sample(c(12, 30, 80), 1)
  rows <- list()
  add <- function(stratum, pred, n, N, rate) {
    person <- sample.int(persons, n, replace = TRUE)
    shift <- rnorm(persons, 0, 0.8)[person]
    p <- plogis(qlogis(rate) + shift)
    data.frame(stratum = stratum, person = person, truth = rbinom(n, 1, p),
               pred = pred, weight = N / n, fpc = N)
  }
  if (two_by_source) {
    rows[[1]] <- add(1, 1, n_pos %/% 2, N_pos %/% 2, ppv)
    rows[[2]] <- add(2, 1, n_pos - n_pos %/% 2, N_pos - N_pos %/% 2, min(0.99, ppv + 0.05))
    rows[[3]] <- add(3, 0, n_neg %/% 2, N_neg %/% 2, fomr)
    rows[[4]] <- add(4, 0, n_neg - n_neg %/% 2, N_neg - N_neg %/% 2, fomr / 2)
  } else {
    rows[[1]] <- add(1, 1, n_pos, N_pos, ppv)
    rows[[2]] <- add(2, 0, n_neg, N_neg, fomr)
  }
  df <- do.call(rbind, rows)
  df$tp <- as.numeric(df$truth == 1 & df$pred == 1)
  df$fp <- as.numeric(df$truth == 0 & df$pred == 1)
  df$fn <- as.numeric(df$truth == 1 & df$pred == 0)
  df$tn <- as.numeric(df$truth == 0 & df$pred == 0)
  df
}

ratio <- function(design, num, den) {
  r <- svyratio(num, den, design)
  c(coef(r)[1], SE(r)[1])
}

contrast <- function(design, expr) {
  totals <- svytotal(~tp + fp + fn + tn, design)
  r <- svycontrast(totals, expr)
  c(coef(r)[1], SE(r)[1])
}

metrics <- function(design) {
  out <- list(
    recall = ratio(design, ~tp, ~I(tp + fn)),
    precision = ratio(design, ~tp, ~I(tp + fp)),
    accuracy = ratio(design, ~I(tp + tn), ~I(tp + fp + fn + tn)),
    specificity = ratio(design, ~tn, ~I(tn + fp)),
    npv = ratio(design, ~tn, ~I(tn + fn)),
    f1 = ratio(design, ~I(2 * tp), ~I(2 * tp + fp + fn)),
    prevalence = ratio(design, ~I(tp + fn), ~I(tp + fp + fn + tn)),
    kappa = contrast(design, quote(2 * (tp * tn - fp * fn) /
      ((tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)))),
    mcc = contrast(design, quote((tp * tn - fp * fn) /
      sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))),
    balanced_accuracy = contrast(design, quote((tp / (tp + fn) + tn / (tn + fp)) / 2))
  )
  paste0("{", paste(vapply(names(out), function(m) sprintf(
    "\"%s\": {\"estimate\": %s, \"se\": %s}", m, f17(out[[m]][1]), f17(out[[m]][2])), ""),
    collapse = ", "), "}")
}

intervals <- function(design) {
  parts <- c()
  for (what in c("recall", "precision")) {
    sub <- if (what == "recall") subset(design, truth == 1) else subset(design, pred == 1)
    y <- if (what == "recall") ~pred else ~truth
    for (level in c(0.95, 0.90)) {
      logit <- confint(svyciprop(y, sub, method = "logit", level = level))
      beta <- confint(svyciprop(y, sub, method = "beta", level = level))
      parts <- c(parts, sprintf(paste0(
        "{\"metric\": \"%s\", \"confidence_level\": %s, \"degf\": %s, \"nrow\": %s, ",
        "\"logit_low\": %s, \"logit_high\": %s, \"beta_low\": %s, \"beta_high\": %s}"),
        what, f17(level), f17(degf(sub)), f17(nrow(sub)), f17(logit[1]), f17(logit[2]),
        f17(beta[1]), f17(beta[2])))
    }
  }
  paste0("[", paste(parts, collapse = ", "), "]")
}

records <- c()
for (id in 1:16) {
  df <- make_data(id)
  fpc_design <- svydesign(ids = ~1, strata = ~stratum, weights = ~weight, fpc = ~fpc,
                          data = df)
  cluster_design <- svydesign(ids = ~person, strata = ~stratum, weights = ~weight,
                              nest = TRUE, data = df)
  records <- c(records, paste0(
    "{\"id\": ", id,
    ", \"stratum\": ", vec(df$stratum), ", \"person\": ", vec(df$person),
    ", \"truth\": ", vec(df$truth), ", \"pred\": ", vec(df$pred),
    ", \"weight\": ", vecd(df$weight), ", \"fpc\": ", vecd(df$fpc),
    ", \"fpc_design\": {\"degf\": ", f17(degf(fpc_design)),
    ", \"metrics\": ", metrics(fpc_design), ", \"intervals\": ", intervals(fpc_design), "}",
    ", \"cluster_design\": {\"degf\": ", f17(degf(cluster_design)),
    ", \"metrics\": ", metrics(cluster_design), ", \"intervals\": ",
    intervals(cluster_design), "}}"))
}
path <- file.path(out_dir, "survey_stratified.json")
writeLines(c("[", paste(records, collapse = ",\n"), "]"), path)
cat("wrote", path, "\n")
