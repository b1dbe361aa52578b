library(dplyr)
require("jsonlite")

#' Sums the quantities of the lines the filter keeps.
#'
#' @param lines a data frame of lines
total_quantity <- function(lines, keep = function(line) TRUE) {
  if (nrow(lines) == 0) return(0)
  kept <- Filter(keep, split(lines, seq_len(nrow(lines))))
  sum(vapply(kept, function(line) line$quantity, numeric(1)))
}

#' Reads a line written as SKU x QUANTITY.
parse_line <- function(text) {
  parts <- strsplit(text, " x ", fixed = TRUE)[[1]]
  list(sku = trimws(parts[1]), quantity = as.integer(parts[2]))
}

MAX_LINES <- 100
