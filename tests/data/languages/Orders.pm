package Acme::Orders;

use strict;
use warnings;
use List::Util qw(sum0);
use Carp;
require JSON::PP;

# Sums the quantities of the lines the filter keeps.
sub total_quantity {
    my ($lines, $keep) = @_;
    $keep //= sub { 1 };
    return sum0(map { $_->{quantity} } grep { $keep->($_) } @$lines);
}

# Reads a line written as SKU x QUANTITY.
sub parse_line {
    my ($text) = @_;
    my ($sku, $quantity) = $text =~ /^(\S+) x (\d+)$/ or croak "bad line: $text";
    return { sku => $sku, quantity => $quantity };
}

package Acme::Orders::Store {
    # Makes an empty order store.
    sub new {
        my ($class) = @_;
        return bless { saved => {} }, $class;
    }

    sub save {
        my ($self, $order_id, $lines) = @_;
        $self->{saved}{$order_id} = $lines;
    }
}

1;
