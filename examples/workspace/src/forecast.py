"""A naive forecast: next month's revenue is the mean of the last three."""

# TODO: weigh recent months more
def forecast(monthly_revenue):
    last = monthly_revenue[-3:]
    # TODO: handle fewer than three months
    return sum(last) / len(last)
