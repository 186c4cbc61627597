"""Prints the revenue of each region from data/sales.csv."""

import csv
from collections import defaultdict

# TODO: read the file name from the command line
SALES = "data/sales.csv"


def revenue_by_region(path):
    totals = defaultdict(float)
    with open(path, newline="") as sales:
        for row in csv.DictReader(sales):
            totals[row["region"]] += float(row["revenue"])
    return totals


def main():
    totals = revenue_by_region(SALES)
    # TODO(mia): sort by revenue, not by name
    for region in sorted(totals):
        print(f"{region:<10} {totals[region]:>12.2f}")
    print(f"{'Totla':<10} {sum(totals.values()):>12.2f}")


if __name__ == "__main__":
    main()
