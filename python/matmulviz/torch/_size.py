"""torch.Size: a tuple of ints that prints as torch.Size([2, 3])."""


class Size(tuple):
    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
